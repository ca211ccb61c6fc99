import { eq, sql } from 'drizzle-orm';
import { processConfig } from '../../src/config.js';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { availabilityHolds, reservations, reservationTables } from '../../src/db/schema/index.js';
import { purgeExpiredHolds } from '../../src/services/holds/hold-service.js';
import { checkInvariants } from '../../src/services/invariants/check-invariants.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';
import { expectInvariantsHold } from '../support/invariants.js';
import { configureVenue, localDate, type VenueFixtureOptions } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);
const origin = { origin: 'https://shop.example' };
const oneTable: VenueFixtureOptions = { tables: [{ name: 'Last', minSeats: 1, maxSeats: 4 }] };

async function setup(options: VenueFixtureOptions = oneTable) {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId, options);
  return { ...t, fixture, api: client(server.url, t.key) };
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

/** The test-only way to let a hold lapse now: its row and its occupancy rows expire a second ago. */
async function expireHold(id: string): Promise<void> {
  await db().transaction(async (tx) => {
    await tx
      .update(availabilityHolds)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(availabilityHolds.id, id));
    await tx
      .update(reservationTables)
      .set({ expiresAt: sql`now() - interval '1 second'` })
      .where(eq(reservationTables.holdId, id));
  });
}

/** Pairs of live occupancy rows of one table over overlapping times, holds (lapsed or not) and reservations alike. */
async function doubleOccupancies(venueId: string): Promise<number> {
  const [{ n }] = (await db().execute(sql`
    select count(*)::int as n from reservation_tables a join reservation_tables b
      on a.table_id = b.table_id and a.during && b.during and a.ctid < b.ctid
    where a.venue_id = ${venueId} and a.live and b.live`)) as unknown as { n: number }[];
  return n;
}

function slot(venueId: string, extra: Record<string, unknown> = {}) {
  return { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, ...extra };
}

async function availableAt(api: Client, venueId: string, time: string, partySize = 2) {
  return (await api.get(`/availability?venueId=${venueId}&serviceDate=${tomorrow}&time=${time}&partySize=${partySize}`)).body;
}

describe('POST /availability/holds', () => {
  it('holds a table: 201 {hold} with the proposal; the table is taken for others until released', async () => {
    const { api, venueId } = await setup();
    const {
      venueId: _v,
      serviceDate: _d,
      partySize: _p,
      timezone: _z,
      available: _a,
      reason: _r,
      alternatives: _alt,
      livemode: _l,
      ...proposal
    } = await availableAt(api, venueId, '19:00');
    const before = Date.now();
    const res = await api.post('/availability/holds', slot(venueId, { ttlSeconds: 120 }));
    expect(res.status, res.text).toBe(201);
    const { hold } = res.body;
    expect(Object.keys(hold).sort()).toEqual(['expiresAt', 'id', 'partySize', 'proposal', 'serviceDate', 'time', 'venueId']);
    expect(hold).toMatchObject({ venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 });
    expect(res.body.livemode).toBe(true);
    const expiresIn = new Date(hold.expiresAt).getTime() - before;
    expect(expiresIn).toBeGreaterThan(110_000);
    expect(expiresIn).toBeLessThan(130_000);
    expect(hold.proposal).toEqual(proposal);
    expect(hold.proposal).toMatchObject({ time: '19:00', turnTimeMinutes: 90, seats: 4, overflowsShift: false });

    // Held: nobody else gets the table, neither a booking nor another hold.
    expect(await availableAt(api, venueId, '19:00')).toMatchObject({ available: false, reason: 'no_table' });
    const booking = await api.post('/reservations', slot(venueId));
    expect(booking.status).toBe(409);
    expect(booking.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_table' } });
    expect(Array.isArray(booking.body.error.details.alternatives)).toBe(true);
    const second = await api.post('/availability/holds', slot(venueId, { time: '19:30' }));
    expect(second.status).toBe(409);
    expect(second.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_table' } });

    // Released: free at once; DELETE is idempotent.
    expect((await api.delete(`/availability/holds/${hold.id}`)).status).toBe(204);
    expect((await api.delete(`/availability/holds/${hold.id}`)).status).toBe(204);
    expect((await api.get(`/availability/holds/${hold.id}`)).status).toBe(404);
    expect(await availableAt(api, venueId, '19:00')).toMatchObject({ available: true });
  });

  it('unavailable → 409 no_availability with the reason and alternatives, as POST /reservations', async () => {
    const { api, venueId } = await setup({ ...oneTable, closures: [{ from: tomorrow, to: tomorrow }] });
    const closed = await api.post('/availability/holds', slot(venueId));
    expect(closed.status).toBe(409);
    expect(closed.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'closed', alternatives: [] } });
    const { api: api2, venueId: venue2 } = await setup();
    const late = await api2.post('/availability/holds', slot(venue2, { time: '22:30' }));
    expect(late.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'after_last_seating' } });
    expect(late.body.error.details.alternatives.map((a: { time: string }) => a.time)).toContain('22:00');
  });

  it('GET answers the live hold, 404 once expired; an expired hold frees its table at once, before any sweep', async () => {
    const { api, venueId, fixture } = await setup();
    const { hold } = (await api.post('/availability/holds', slot(venueId))).body;
    const read = await api.get(`/availability/holds/${hold.id}`);
    expect(read.status).toBe(200);
    expect(read.body.hold).toEqual(hold);
    expect(read.headers.get('etag')).toBeNull();

    await expireHold(hold.id);
    expect((await api.get(`/availability/holds/${hold.id}`)).status).toBe(404);
    expect(await availableAt(api, venueId, '19:00')).toMatchObject({ available: true });
    // The lapsed occupancy row is still there (no sweep ran) and does not stand in the way of the exclusion constraint.
    expect(await db().select().from(reservationTables).where(eq(reservationTables.holdId, hold.id))).toHaveLength(1);
    const booked = await api.post('/reservations', slot(venueId, { tableId: fixture.tableIds.Last }));
    expect(booked.status, booked.text).toBe(201);
    expect(await db().select().from(reservationTables).where(eq(reservationTables.holdId, hold.id))).toHaveLength(0);
    expect(await doubleOccupancies(venueId)).toBe(0);
  });

  it('holds count toward pacing, and stop counting once released or expired', async () => {
    const tables = Array.from({ length: 4 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId } = await setup({ tables, pacing: [{ maxCovers: 6, windowMinutes: 30 }] });
    const first = (await api.post('/availability/holds', slot(venueId, { partySize: 4 }))).body.hold;
    expect(first).toBeDefined();
    expect(await availableAt(api, venueId, '19:15', 3)).toMatchObject({ available: false, reason: 'pacing_full' });
    expect((await api.post('/reservations', slot(venueId, { time: '19:15', partySize: 3 }))).body.error.details.reason).toBe('pacing_full');
    expect((await api.post('/availability/holds', slot(venueId, { time: '19:15', partySize: 3 }))).body.error.details.reason).toBe(
      'pacing_full',
    );
    expect(await availableAt(api, venueId, '19:15', 2)).toMatchObject({ available: true });

    await api.delete(`/availability/holds/${first.id}`);
    expect(await availableAt(api, venueId, '19:15', 3)).toMatchObject({ available: true });
    const again = (await api.post('/availability/holds', slot(venueId, { partySize: 4 }))).body.hold;
    expect(await availableAt(api, venueId, '19:15', 3)).toMatchObject({ available: false, reason: 'pacing_full' });
    await expireHold(again.id);
    expect(await availableAt(api, venueId, '19:15', 3)).toMatchObject({ available: true });
    expect((await api.post('/reservations', slot(venueId, { time: '19:15', partySize: 3 }))).status).toBe(201);
  });

  it('answers 400 invalid_request naming the fields for bad input', async () => {
    const { api, venueId } = await setup();
    const cases: [Record<string, unknown>, string[]][] = [
      [{}, ['venueId', 'serviceDate', 'time', 'partySize']],
      [slot(venueId, { ttlSeconds: 59 }), ['ttlSeconds']],
      [slot(venueId, { ttlSeconds: 901 }), ['ttlSeconds']],
      [slot(venueId, { ttlSeconds: 'long' }), ['ttlSeconds']],
      [slot(venueId, { ttlSeconds: 120.5 }), ['ttlSeconds']],
      [slot(venueId, { time: '7pm' }), ['time']],
      [slot(venueId, { serviceDate: '2026-02-30' }), ['serviceDate']],
      [slot(venueId, { partySize: 0 }), ['partySize']],
      [slot(venueId, { tableId: 'T1' }), ['tableId']],
      [slot(venueId, { tableId: venueId }), ['tableId']],
      [slot(venueId, { guest: { phone: '1' } }), ['guest']],
    ];
    for (const [body, fields] of cases) {
      const res = await api.post('/availability/holds', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect([...res.body.error.details.fields].sort(), JSON.stringify(body)).toEqual([...fields].sort());
    }
    expect((await api.get('/availability/holds/not-a-uuid')).status).toBe(404);
    expect((await api.post('/reservations', slot(venueId, { holdId: 'h1' }))).body.error.details.fields).toEqual(['holdId']);
    expect(await db().select().from(availabilityHolds).where(eq(availabilityHolds.venueId, venueId))).toHaveLength(0);
  });

  it('a tableId needs floor:write; ttlSeconds bounds are accepted', async () => {
    const { api, venueId, organisationId, fixture } = await setup({
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 4 },
        { name: 'B', minSeats: 1, maxSeats: 4 },
      ],
    });
    const noFloor = client(server.url, await createKey(organisationId, { scopes: ['reservations:write', 'reservations:read'] }));
    const refused = await noFloor.post('/availability/holds', slot(venueId, { tableId: fixture.tableIds.B }));
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'floor:write' } });
    const chosen = await api.post('/availability/holds', slot(venueId, { tableId: fixture.tableIds.B, ttlSeconds: 900 }));
    expect(chosen.status).toBe(201);
    const [row] = await db().select().from(availabilityHolds).where(eq(availabilityHolds.id, chosen.body.hold.id));
    expect(row.tableId).toBe(fixture.tableIds.B);
    const taken = await api.post('/availability/holds', slot(venueId, { tableId: fixture.tableIds.B, ttlSeconds: 60 }));
    expect(taken.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_table' } });
    expect((await api.post('/availability/holds', slot(venueId, { ttlSeconds: 60 }))).status).toBe(201);
  });
});

describe('POST /reservations with holdId', () => {
  it('books the held table and consumes the hold; a second use of it books normally only while the slot is free', async () => {
    const { api, venueId, fixture } = await setup({
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 4 },
        { name: 'B', minSeats: 1, maxSeats: 4 },
      ],
    });
    const { hold } = (await api.post('/availability/holds', slot(venueId, { tableId: fixture.tableIds.B }))).body;
    const booked = await api.post('/reservations', slot(venueId, { holdId: hold.id, notes: 'from a hold' }));
    expect(booked.status, booked.text).toBe(201);
    expect(booked.body.reservation).toMatchObject({
      table: { tableId: fixture.tableIds.B },
      startsAt: hold.proposal.startsAt,
      endsAt: hold.proposal.endsAt,
    });
    expect((await api.get(`/availability/holds/${hold.id}`)).status).toBe(404);
    expect(await db().select().from(availabilityHolds).where(eq(availabilityHolds.id, hold.id))).toHaveLength(0);

    // Consumed: the slot is still free (table A), so the booking proceeds normally…
    const reused = await api.post('/reservations', slot(venueId, { holdId: hold.id }));
    expect(reused.status, reused.text).toBe(201);
    expect(reused.body.reservation.table.tableId).toBe(fixture.tableIds.A);
    // …and once nothing is free it is 409 hold_expired.
    const full = await api.post('/reservations', slot(venueId, { holdId: hold.id }));
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'hold_expired' } });
    expect(Array.isArray(full.body.error.details.alternatives)).toBe(true);
    expect(await doubleOccupancies(venueId)).toBe(0);
  });

  it('other fields must match the hold: 400 naming them, and the hold stays', async () => {
    const { api, venueId, organisationId } = await setup();
    const [other] = (await db().execute(
      sql`insert into venues (organisation_id, name, timezone, country_code) values (${organisationId}, 'Other', 'Europe/Rome', 'IT') returning id`,
    )) as unknown as { id: string }[];
    await configureVenue(other.id);
    const { hold } = (await api.post('/availability/holds', slot(venueId))).body;
    const cases: [Record<string, unknown>, string[]][] = [
      [{ time: '19:15' }, ['time']],
      [{ partySize: 3, serviceDate: localDate(2) }, ['serviceDate', 'partySize']],
      [{ venueId: other.id }, ['venueId']],
    ];
    for (const [change, fields] of cases) {
      const res = await api.post('/reservations', slot(venueId, { holdId: hold.id, ...change }));
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      expect([...res.body.error.details.fields].sort()).toEqual([...fields].sort());
    }
    expect((await api.get(`/availability/holds/${hold.id}`)).status).toBe(200);
    expect((await api.post('/reservations', slot(venueId, { holdId: hold.id }))).status).toBe(201);
  });

  it('an expired hold books when the slot is still free, else 409 hold_expired', async () => {
    const { api, venueId } = await setup();
    const first = (await api.post('/availability/holds', slot(venueId))).body.hold;
    await expireHold(first.id);
    expect((await api.post('/reservations', slot(venueId, { holdId: first.id }))).status).toBe(201);

    const { api: api2, venueId: venue2 } = await setup();
    const second = (await api2.post('/availability/holds', slot(venue2))).body.hold;
    await expireHold(second.id);
    expect((await api2.post('/reservations', slot(venue2, { time: '19:30' }))).status).toBe(201);
    const late = await api2.post('/reservations', slot(venue2, { holdId: second.id }));
    expect(late.status).toBe(409);
    expect(late.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'hold_expired' } });
  });

  it("another key's hold is foreign: not readable, not releasable, not bookable (hold_expired while it holds the table)", async () => {
    const { api, venueId, organisationId } = await setup();
    const other = client(server.url, await createKey(organisationId));
    const { hold } = (await api.post('/availability/holds', slot(venueId))).body;
    expect((await other.get(`/availability/holds/${hold.id}`)).status).toBe(404);
    expect((await other.delete(`/availability/holds/${hold.id}`)).status).toBe(204);
    expect((await api.get(`/availability/holds/${hold.id}`)).status).toBe(200);
    const foreign = await other.post('/reservations', slot(venueId, { holdId: hold.id }));
    expect(foreign.status).toBe(409);
    expect(foreign.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'hold_expired' } });
    expect((await api.post('/reservations', slot(venueId, { holdId: hold.id }))).status).toBe(201);
  });
});

describe('publishable keys', () => {
  it('hold and book from an allowed origin, without tableId, at most 3 live holds per caller IP', async () => {
    const { venueId, organisationId, fixture } = await setup({
      tables: Array.from({ length: 6 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })),
    });
    const widget = client(server.url, await createKey(organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] }));
    const elsewhere = await widget.post('/availability/holds', slot(venueId), { origin: 'https://evil.example' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.details.reason).toBe('origin_not_allowed');
    const withTable = await widget.post('/availability/holds', slot(venueId, { tableId: fixture.tableIds.T0 }), origin);
    expect(withTable.status).toBe(403);
    expect(withTable.body.error.details).toMatchObject({ reason: 'publishable_key', fields: ['tableId'] });

    const holds = [];
    for (let i = 0; i < 3; i++) {
      const res = await widget.post('/availability/holds', slot(venueId), origin);
      expect(res.status, res.text).toBe(201);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      holds.push(res.body.hold);
    }
    const fourth = await widget.post('/availability/holds', slot(venueId), origin);
    expect(fourth.status).toBe(429);
    expect(fourth.body.error.code).toBe('rate_limited');
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Number(fourth.headers.get('retry-after'))).toBeLessThanOrEqual(300);

    // Releasing, booking or expiry gives the room back.
    expect((await widget.delete(`/availability/holds/${holds[0].id}`, origin)).status).toBe(204);
    const booked = await widget.post(
      '/reservations',
      { ...slot(venueId), holdId: holds[1].id, guest: { phone: '+39 06 1234 5678' } },
      origin,
    );
    expect(booked.status, booked.text).toBe(201);
    await expireHold(holds[2].id);
    for (let i = 0; i < 3; i++) expect((await widget.post('/availability/holds', slot(venueId), origin)).status).toBe(201);
    expect((await widget.post('/availability/holds', slot(venueId), origin)).status).toBe(429);
    // Secret keys have no such limit.
    const api = client(server.url, await createKey(organisationId));
    expect((await api.post('/availability/holds', slot(venueId))).status).toBe(201);
  });

  it('concurrent holds of one caller never exceed the limit', async () => {
    const { venueId, organisationId } = await setup({
      tables: Array.from({ length: 10 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })),
    });
    const widget = client(server.url, await createKey(organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] }));
    const results = await Promise.all(Array.from({ length: 8 }, () => widget.post('/availability/holds', slot(venueId), origin)));
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 3, 429: 5 });
  });
});

describe('races in PostgreSQL', () => {
  /** 24 racers, holds and bookings alternating, at times whose 90-minute turns all overlap. */
  async function race(api: Client, venueId: string) {
    const times = ['19:00', '19:30', '20:00'];
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        i % 2
          ? api.post('/availability/holds', slot(venueId, { time: times[i % 3] }))
          : api.post('/reservations', slot(venueId, { time: times[i % 3], notes: `#${i}` })),
      ),
    );
    return results;
  }

  it('24 concurrent holds and bookings for the last table: exactly one wins, and SQL shows no double occupancy', async () => {
    const { api, venueId, fixture } = await setup();
    const results = await race(api, venueId);
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 1, 409: 23 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.code).toBe('no_availability');
    const live = await db().select().from(reservationTables).where(eq(reservationTables.tableId, fixture.tableIds.Last));
    expect(live).toHaveLength(1);
    expect(await doubleOccupancies(venueId)).toBe(0);
    const [{ holds, bookings }] = (await db().execute(sql`
      select (select count(*)::int from availability_holds where venue_id = ${venueId}) as holds,
             (select count(*)::int from reservations where venue_id = ${venueId}) as bookings`)) as unknown as {
      holds: number;
      bookings: number;
    }[];
    expect(holds + bookings).toBe(1);
    await expectInvariantsHold([venueId]);
  });

  it('the same race for a table kept by a lapsed hold: exactly one wins', async () => {
    const { api, venueId, fixture } = await setup();
    const { hold } = (await api.post('/availability/holds', slot(venueId))).body;
    await expireHold(hold.id);
    const results = await race(api, venueId);
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 1, 409: 23 });
    const live = await db().select().from(reservationTables).where(eq(reservationTables.tableId, fixture.tableIds.Last));
    expect(live).toHaveLength(1);
    expect(live[0].holdId).not.toBe(hold.id);
    expect(await doubleOccupancies(venueId)).toBe(0);
    await expectInvariantsHold([venueId]);
  });

  it('concurrent holds and bookings against a pacing rule never exceed maxCovers', async () => {
    const tables = Array.from({ length: 12 }, (_, i) => ({ name: `T${String(i).padStart(2, '0')}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId } = await setup({ tables, pacing: [{ maxCovers: 7, windowMinutes: 30 }] });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        i % 2 ? api.post('/availability/holds', slot(venueId, { time: '19:15' })) : api.post('/reservations', slot(venueId)),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 3, 409: 9 });
    for (const r of results.filter((x) => x.status === 409)) expect(r.body.error.details.reason).toBe('pacing_full');
    const [{ covers }] = (await db().execute(sql`
      select (select coalesce(sum(party_size), 0) from reservations where venue_id = ${venueId})
           + (select coalesce(sum(party_size), 0) from availability_holds where venue_id = ${venueId}) as covers`)) as unknown as {
      covers: string;
    }[];
    expect(Number(covers)).toBe(6);
    await expectInvariantsHold([venueId]);
  });
});

describe('the invariant check (npm run cli -- check)', () => {
  it('counts live holds toward pacing, and no longer once expired', async () => {
    const tables = Array.from({ length: 3 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId, organisationId } = await setup({ tables, pacing: [{ maxCovers: 6, windowMinutes: 30 }] });
    const { hold } = (await api.post('/availability/holds', slot(venueId, { partySize: 4 }))).body;
    const startsAt = new Date(hold.proposal.startsAt);
    // Written behind the engine's back: 4 more covers in the hold's block.
    await db()
      .insert(reservations)
      .values({
        organisationId,
        venueId,
        serviceDate: tomorrow,
        time: '19:10',
        startsAt,
        endsAt: new Date(startsAt.getTime() + 90 * 60_000),
        partySize: 4,
        status: 'created',
        source: 'api',
      });
    expect((await checkInvariants({ venueIds: [venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).pacingBlocksOverMaxCovers).toBe(
      1,
    );
    await expireHold(hold.id);
    await expectInvariantsHold([venueId]);
  });
});

describe('purge', () => {
  it('the daily purge deletes expired holds and keeps live ones', async () => {
    const { api, venueId } = await setup({
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 4 },
        { name: 'B', minSeats: 1, maxSeats: 4 },
      ],
    });
    const expired = (await api.post('/availability/holds', slot(venueId))).body.hold;
    const live = (await api.post('/availability/holds', slot(venueId))).body.hold;
    await expireHold(expired.id);
    expect(await purgeExpiredHolds()).toBeGreaterThanOrEqual(1);
    const left = await db().select({ id: availabilityHolds.id }).from(availabilityHolds).where(eq(availabilityHolds.venueId, venueId));
    expect(left.map((h) => h.id)).toEqual([live.id]);
    expect(await db().select().from(reservationTables).where(eq(reservationTables.holdId, expired.id))).toHaveLength(0);
  });
});
