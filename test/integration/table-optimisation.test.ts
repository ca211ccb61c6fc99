import { and, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, reservationTables } from '../../src/db/schema/index.js';
import { VenueDay } from '../../src/lib/availability/venue-day.js';
import { closeQueues } from '../../src/queues/queues.js';
import { loadVenueDay } from '../../src/services/availability/venue-day-loader.js';
import { transactionWithEvents, systemActor } from '../../src/services/outbox/outbox.js';
import { applyTableMoves, retryBookingTransaction, StaleMovesError } from '../../src/services/reservations/table-moves.js';
import { client, createTenant, useTestServer, type Client } from '../support/harness.js';
import { expectInvariantsHold } from '../support/invariants.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { mulberry32 } from '../support/seeded-random.js';

/** docs/reservations.md "Table optimisation", over the real server and PostgreSQL. */

const server = useTestServer();
afterAll(async () => closeQueues());

const tomorrow = localDate(1);
const venueIds: string[] = [];

/**
 * The fragmented floor: a two-top and two four-tops. A couple booked at 19:00 while the two-top was
 * still taken until 19:30 sits on a four-top; the party before it then cancels, so the two-top is free
 * and the couple could have had it. Another four-top is taken by a party of 4. A party of 4 at 19:00
 * finds no free table: moving the couple to the two-top frees one.
 */
async function fragmentedFloor(options: { coupleTable?: 'explicit' } = {}) {
  const t = await createTenant();
  venueIds.push(t.venueId);
  const fixture = await configureVenue(t.venueId, {
    tables: [
      { name: 'T2', minSeats: 1, maxSeats: 2 },
      { name: 'F4a', minSeats: 2, maxSeats: 4 },
      { name: 'F4b', minSeats: 2, maxSeats: 4 },
    ],
  });
  const api = client(server.url, t.key);
  const book = (time: string, partySize: number, extra: Record<string, unknown> = {}) =>
    api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time, partySize, ...extra });
  const early = await book('18:00', 2);
  expect(early.body.reservation.table.tables[0].name).toBe('T2');
  const couple = await book('19:00', 2, options.coupleTable === 'explicit' ? { tableId: fixture.tableIds.F4a } : {});
  expect(couple.status).toBe(201);
  expect(couple.body.reservation.table.tables[0].name).toBe('F4a');
  expect((await book('19:00', 4)).body.reservation.table.tables[0].name).toBe('F4b');
  expect((await api.delete(`/reservations/${early.body.reservation.id}`)).status).toBe(200);
  return { ...t, fixture, api, book, couple: couple.body.reservation as { id: string; tableLocked: boolean } };
}

function availabilityOf(api: Client, venueId: string, time: string, partySize: number) {
  return api.get(`/availability?${new URLSearchParams({ venueId, serviceDate: tomorrow, time, partySize: String(partySize) })}`);
}

async function historyOf(api: Client, id: string) {
  return (await api.get(`/reservations/${id}/history`)).body.data as {
    type: string;
    actor: { kind: string; name: string };
    changes: Record<string, { from: unknown; to: unknown }>;
  }[];
}

describe('table optimisation (venue setting tableOptimisation, default on)', () => {
  it('seats a party by moving an unlocked couple to the free two-top: availability says so, the booking does it, the history tells it', async () => {
    const { api, venueId, book, couple } = await fragmentedFloor();
    expect(couple.tableLocked).toBe(false);
    expect((await api.get(`/venues/${venueId}`)).body.venue.tableOptimisation).toBe('on');

    const answer = await availabilityOf(api, venueId, '19:00', 4);
    expect(answer.body).toMatchObject({ available: true, reason: 'available', seats: 4 });
    const slots = await api.get(`/availability/slots?${new URLSearchParams({ venueId, serviceDate: tomorrow, partySize: '4' })}`);
    expect(slots.body.data.map((s: { time: string }) => s.time)).toContain('19:00');
    const days = await api.get(`/availability/days?${new URLSearchParams({ venueId, from: tomorrow, to: tomorrow, partySize: '4' })}`);
    expect(days.body.data[0]).toMatchObject({ available: true });

    const booked = await book('19:00', 4);
    expect(booked.status).toBe(201);
    expect(booked.body.reservation).toMatchObject({ tableLocked: false, table: { tables: [{ name: 'F4a' }] } });
    const moved = (await api.get(`/reservations/${couple.id}`)).body.reservation;
    expect(moved).toMatchObject({ time: '19:00', status: 'created', tableLocked: false, table: { tables: [{ name: 'T2' }] } });

    const history = await historyOf(api, couple.id);
    expect(history.at(-1)).toMatchObject({ type: 'reservation_updated', actor: { kind: 'system', name: 'table-optimiser' } });
    expect(Object.keys(history.at(-1)!.changes)).toEqual(['table']);
    // A table change alone is no event of the catalogue: nothing published about the couple since its creation.
    const published = await db()
      .select({ type: events.type })
      .from(events)
      .where(and(eq(events.subjectId, couple.id), eq(events.published, true)));
    expect(published.map((e) => e.type)).toEqual(['reservation_created']);
    // The floor is full now: nothing more moves.
    expect((await availabilityOf(api, venueId, '19:00', 2)).body).toMatchObject({ available: false, reason: 'no_table' });
  });

  it('with tableOptimisation off the same floor answers no_table, as without the feature', async () => {
    const { api, venueId, book } = await fragmentedFloor();
    const patched = await api.patch(`/venues/${venueId}`, { tableOptimisation: 'off' });
    expect(patched.body.venue.tableOptimisation).toBe('off');
    expect((await availabilityOf(api, venueId, '19:00', 4)).body).toMatchObject({ available: false, reason: 'no_table' });
    const refused = await book('19:00', 4);
    expect(refused.status).toBe(409);
    expect(refused.body.error.details.reason).toBe('no_table');
    expect((await api.patch(`/venues/${venueId}`, { tableOptimisation: 'sometimes' })).body.error.details.fields).toEqual([
      'tableOptimisation',
    ]);
  });

  it('never moves a locked table: chosen explicitly, or locked by PATCH; unlocking lets it move', async () => {
    const explicit = await fragmentedFloor({ coupleTable: 'explicit' });
    expect(explicit.couple.tableLocked).toBe(true);
    expect((await explicit.book('19:00', 4)).body.error.details.reason).toBe('no_table');

    const { api, venueId, book, couple } = await fragmentedFloor();
    expect((await api.patch(`/reservations/${couple.id}`, { tableLocked: true })).body.reservation.tableLocked).toBe(true);
    expect((await availabilityOf(api, venueId, '19:00', 4)).body.reason).toBe('no_table');
    expect((await book('19:00', 4)).status).toBe(409);
    expect((await api.patch(`/reservations/${couple.id}`, { tableLocked: false })).body.reservation.tableLocked).toBe(false);
    expect((await book('19:00', 4)).status).toBe(201);
  });

  it('a hold moves parties as a booking does, and the booking of the hold keeps its seating', async () => {
    const { api, venueId, couple } = await fragmentedFloor();
    const hold = await api.post('/availability/holds', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 4 });
    expect(hold.status).toBe(201);
    expect((await api.get(`/reservations/${couple.id}`)).body.reservation.table.tables[0].name).toBe('T2');
    const booked = await api.post('/reservations', {
      venueId,
      serviceDate: tomorrow,
      time: '19:00',
      partySize: 4,
      holdId: hold.body.hold.id,
    });
    expect(booked.status).toBe(201);
    expect(booked.body.reservation.table.tables[0].name).toBe('F4a');
  });

  it('a plan made stale by a concurrent change is refused whole (StaleMovesError) and nothing of it is kept', async () => {
    const { api, venueId, organisationId, couple, fixture } = await fragmentedFloor();
    const { config, bookings } = await loadVenueDay(db(), { organisationId, venueIds: null }, venueId, tomorrow, tomorrow);
    const evaluation = new VenueDay(config, tomorrow, bookings, Date.now()).evaluate('19:00', 4);
    expect(evaluation.available && evaluation.moves.map((m) => m.reservationId)).toEqual([couple.id]);
    if (!evaluation.available) return;
    // Meanwhile the floor locks the couple where it sits.
    expect((await api.patch(`/reservations/${couple.id}`, { tableLocked: true })).status).toBe(200);
    const applying = transactionWithEvents(systemActor('test'), (tx, emit) =>
      applyTableMoves(tx, emit, venueId, evaluation.moves, false, Date.now()),
    );
    await expect(applying).rejects.toBeInstanceOf(StaleMovesError);
    const tables = await db()
      .select({ tableId: reservationTables.tableId })
      .from(reservationTables)
      .where(eq(reservationTables.reservationId, couple.id));
    expect(tables).toEqual([{ tableId: fixture.tableIds.F4a }]);
  });

  it('retries a booking whose moves went stale, and answers conflict after the third stale plan', async () => {
    let runs = 0;
    expect(await retryBookingTransaction(async () => (++runs < 3 ? Promise.reject(new StaleMovesError()) : 'booked'))).toBe('booked');
    expect(runs).toBe(3);
    await expect(retryBookingTransaction(() => Promise.reject(new StaleMovesError()))).rejects.toMatchObject({
      code: 'no_availability',
      details: { reason: 'conflict' },
    });
    // A deadlock PostgreSQL broke by rolling the booking back is run again too; other errors are not.
    runs = 0;
    const deadlock = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    expect(await retryBookingTransaction(async () => (++runs < 2 ? Promise.reject(deadlock) : 'booked'))).toBe('booked');
    await expect(retryBookingTransaction(() => Promise.reject(new Error('other')))).rejects.toThrow('other');
  });

  it('a rush of concurrent bookings and holds that all need moves seats as many as one by one, and none is refused with conflict', async () => {
    const t = await createTenant();
    venueIds.push(t.venueId);
    const names = (prefix: string) => Array.from({ length: 8 }, (_, i) => `${prefix}${i + 1}`);
    await configureVenue(t.venueId, {
      tables: [
        ...names('A').map((name) => ({ name, minSeats: 1, maxSeats: 2 })),
        ...names('F').map((name) => ({ name, minSeats: 2, maxSeats: 4 })),
      ],
    });
    const api = client(server.url, t.key);
    const book = (time: string, partySize: number) =>
      api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time, partySize });
    // Eight couples at 18:00 take the two-tops until 19:30, so eight couples at 19:00 sit on the four-tops;
    // the early ones cancel: eight two-tops free, eight four-tops each freed by moving its couple.
    const early = [];
    for (let i = 0; i < 8; i++) early.push(await book('18:00', 2));
    for (let i = 0; i < 8; i++) expect((await book('19:00', 2)).body.reservation.table.tables[0].name).toMatch(/^F/);
    for (const r of early) expect((await api.delete(`/reservations/${r.body.reservation.id}`)).status).toBe(200);

    // Every third request is a slot hold: holds move parties as bookings do, in the same turn.
    const hold = (partySize: number) =>
      api.post('/availability/holds', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize });
    const rush = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? hold(3 + (i % 2)) : book('19:00', 3 + (i % 2)))));
    const reasons = rush.filter((r) => r.status === 409).map((r) => r.body.error.details.reason);
    expect({ seated: rush.filter((r) => r.status === 201).length, reasons }).toEqual({ seated: 8, reasons: Array(4).fill('no_table') });
    await expectInvariantsHold([t.venueId]);
  });

  it('concurrent bookings and PATCHes on one busy night: every 201 has its tables, and the invariant check finds nothing', async () => {
    // Waves of 84 requests within seconds: more than a key's default 600 a minute.
    const t = await createTenant({ key: { rateLimitPerMinute: 1_000_000 } });
    venueIds.push(t.venueId);
    const tops = [...Array(6).fill([1, 2]), ...Array(8).fill([2, 4]), ...Array(3).fill([4, 6]), [5, 8]] as [number, number][];
    await configureVenue(t.venueId, {
      tables: tops.map(([minSeats, maxSeats], i) => ({
        name: `T${String(i).padStart(2, '0')}`,
        minSeats,
        maxSeats,
        area: i % 2 ? 'Terrace' : 'Room',
      })),
      combinations: [
        ['T00', 'T01'],
        ['T06', 'T07'],
        ['T08', 'T09'],
      ],
    });
    const api = client(server.url, t.key);
    const random = mulberry32(21);
    const times = ['18:00', '18:30', '19:00', '19:30', '20:00', '20:30', '21:00'];
    const sizes = [2, 2, 2, 3, 4, 4, 5, 6, 8];
    const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)];
    const book = () => api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: pick(times), partySize: pick(sizes) });

    // A first wave fragments the floor; cancellations leave holes that moves can use. Whether a
    // request of a wave needs moves depends on the order the concurrent requests commit in (none in
    // twelve waves, once, with a second suite beside): this test holds the invariants under whatever
    // mix comes; the rush test above is the one that makes concurrent moves happen for sure.
    const responses = await Promise.all(Array.from({ length: 60 }, book));
    for (let wave = 0; wave < 3; wave++) {
      const seated = responses.filter((r) => r.status === 201).map((r) => r.body.reservation.id as string);
      const changes = seated
        .slice(wave * 24, wave * 24 + 24)
        .map((id, i) =>
          i % 3 === 0
            ? api.delete(`/reservations/${id}`)
            : i % 3 === 1
              ? api.patch(`/reservations/${id}`, { time: pick(times) })
              : api.patch(`/reservations/${id}`, { tableLocked: random() < 0.5 }),
        );
      const answers = await Promise.all([...changes, ...Array.from({ length: 60 }, book)]);
      for (const r of answers) expect([200, 201, 409]).toContain(r.status);
      responses.push(...answers);
    }

    const created = responses.filter((r) => r.status === 201 && r.body.reservation).map((r) => r.body.reservation.id as string);
    const live = await db().execute<{ id: string; tables: number }>(sql`
      select r.id, (select count(*)::int from reservation_tables rt where rt.reservation_id = r.id and rt.live) as tables
      from reservations r where r.venue_id = ${t.venueId} and r.status not in ('cancelled')`);
    const tablesById = new Map([...live].map((r) => [r.id, r.tables]));
    for (const id of created) if (tablesById.has(id)) expect(tablesById.get(id), id).toBeGreaterThan(0);
    await expectInvariantsHold([t.venueId]);
  });
});
