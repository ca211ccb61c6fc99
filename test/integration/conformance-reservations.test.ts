import { and, asc, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { events, reservations } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { runImport } from '../../src/services/imports/process-import-job.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate, type VenueFixtureOptions } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: imports are run here by calling the processor, never by another file's worker.
useOwnQueuePrefix('confres');

/**
 * Conformance of availability, reservations, the waiting list and reservation imports with
 * docs/api.md and docs/reservations.md, checked over the real server.
 */

const server = useTestServer();
afterAll(async () => closeQueues());

const tomorrow = localDate(1);

async function setup(options: VenueFixtureOptions = {}, venue: Parameters<typeof createTenant>[0] = {}) {
  const t = await createTenant(venue);
  const fixture = await configureVenue(t.venueId, options);
  return { ...t, fixture, api: client(server.url, t.key) };
}

function book(api: Client, venueId: string, extra: Record<string, unknown> = {}) {
  return api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, ...extra });
}

function availability(api: Client, venueId: string, query: Record<string, string | number> = {}) {
  const params = new URLSearchParams({
    venueId,
    serviceDate: tomorrow,
    time: '19:00',
    partySize: '2',
    ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])),
  });
  return api.get(`/availability?${params}`);
}

/** The published events (history-only rows aside), oldest first. */
async function eventTypesOf(subjectId: string): Promise<string[]> {
  const rows = await db()
    .select({ type: events.type })
    .from(events)
    .where(and(eq(events.subjectId, subjectId), eq(events.published, true)))
    .orderBy(asc(events.createdAt), asc(events.id));
  return rows.map((r) => r.type);
}

const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('availability reasons, end to end through GET /availability and POST /reservations', () => {
  it('answers each reason the same way on both endpoints', async () => {
    const closedDay = localDate(3);
    const { api, venueId, fixture } = await setup(
      {
        tables: [
          { name: 'T2', minSeats: 1, maxSeats: 2 },
          { name: 'T4', minSeats: 2, maxSeats: 4 },
          { name: 'B6', minSeats: 4, maxSeats: 6, isBlocked: true },
        ],
        turnTimes: [{ minPartySize: 1, maxPartySize: 10, durationMinutes: 90 }],
        pacing: [{ maxCovers: 4, windowMinutes: 30 }],
        closures: [{ from: closedDay, to: closedDay }],
      },
      { venue: { bookingHorizonDays: 30 } },
    );
    const cases: { query: Record<string, string | number>; reason: string }[] = [
      { query: { serviceDate: closedDay }, reason: 'closed' },
      { query: { time: '12:00' }, reason: 'no_shift' },
      { query: { time: '17:59' }, reason: 'no_shift' },
      { query: { serviceDate: localDate(-1) }, reason: 'no_shift' },
      { query: { serviceDate: localDate(31) }, reason: 'no_shift' },
      { query: { time: '22:15' }, reason: 'after_last_seating' },
      { query: { partySize: 11 }, reason: 'no_turn_time_rule' },
      { query: { partySize: 5 }, reason: 'no_table' },
    ];
    for (const { query, reason } of cases) {
      const got = await availability(api, venueId, query);
      expect(got.status, JSON.stringify(query)).toBe(200);
      expect(got.body, JSON.stringify(query)).toMatchObject({ available: false, reason });
      const booked = await book(api, venueId, query);
      expect(booked.status, JSON.stringify(query)).toBe(409);
      expect(booked.body.error, JSON.stringify(query)).toMatchObject({
        code: 'no_availability',
        details: { reason, alternatives: expect.any(Array) },
      });
    }
    // pacing_full: 4 covers per 30-minute block from 18:00.
    expect((await book(api, venueId, { time: '19:00', partySize: 3 })).status).toBe(201);
    expect((await availability(api, venueId, { time: '19:15', partySize: 2 })).body).toMatchObject({
      available: false,
      reason: 'pacing_full',
    });
    expect((await book(api, venueId, { time: '19:15', partySize: 2 })).body.error.details.reason).toBe('pacing_full');
    // table_blocked: an explicitly requested table that is out of use.
    const blocked = await book(api, venueId, { time: '20:00', partySize: 4, tableId: fixture.tableIds.B6 });
    expect(blocked.status).toBe(409);
    expect(blocked.body.error.details).toMatchObject({ reason: 'table_blocked', alternatives: expect.any(Array) });
  });

  it('answers no_shift for a time earlier than now + minNoticeMinutes', async () => {
    const { api, venueId } = await setup({}, { venue: { minNoticeMinutes: 3 * 24 * 60 } });
    expect((await availability(api, venueId)).body).toMatchObject({ available: false, reason: 'no_shift' });
    expect((await book(api, venueId)).body.error.details.reason).toBe('no_shift');
    expect((await availability(api, venueId, { serviceDate: localDate(4) })).body.available).toBe(true);
  });

  it('offers at most 6 alternatives within ±120 minutes, nearest first and earlier first on ties, in the Proposal shape', async () => {
    const { api, venueId } = await setup({ pacing: [{ maxCovers: 2, windowMinutes: 15 }] });
    expect((await book(api, venueId)).status).toBe(201);
    const res = await availability(api, venueId);
    expect(res.body).toMatchObject({ available: false, reason: 'pacing_full' });
    expect(res.body.alternatives.map((p: { time: string }) => p.time)).toEqual(['18:45', '19:15', '18:30', '19:30', '18:15', '19:45']);
    for (const p of res.body.alternatives) {
      expect(Object.keys(p).sort()).toEqual(['endsAt', 'overflowsShift', 'seats', 'startsAt', 'time', 'turnTimeMinutes']);
      expect(p.startsAt).toMatch(instant);
      expect(p.endsAt).toMatch(instant);
    }
    const refused = await book(api, venueId);
    expect(refused.body.error.details.alternatives).toEqual(res.body.alternatives);
  });

  it('keeps alternatives within 120 minutes of the requested time', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    expect((await book(api, venueId)).status).toBe(201);
    const res = await availability(api, venueId, { time: '19:30' });
    expect(res.body.alternatives.map((p: { time: string }) => p.time)).toEqual(['20:30', '20:45', '21:00', '21:15', '21:30']);
  });

  it('answers an available time with the proposal fields and every documented key', async () => {
    const { api, venueId } = await setup();
    const res = await availability(api, venueId);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        'alternatives',
        'available',
        'endsAt',
        'livemode',
        'overflowsShift',
        'partySize',
        'reason',
        'seats',
        'serviceDate',
        'startsAt',
        'time',
        'timezone',
        'turnTimeMinutes',
        'venueId',
      ].sort(),
    );
    expect(res.body).toMatchObject({
      venueId,
      serviceDate: tomorrow,
      partySize: 2,
      timezone: 'Europe/Rome',
      available: true,
      alternatives: [],
      time: '19:00',
      seats: 2,
      turnTimeMinutes: 90,
      overflowsShift: false,
      livemode: true,
    });
  });

  it('answers 400 naming the field for malformed queries', async () => {
    const { api, venueId } = await setup();
    const cases: [Record<string, string>, string][] = [
      [{ serviceDate: '2026-02-30' }, 'serviceDate'],
      [{ time: '24:00' }, 'time'],
      [{ time: '9:00' }, 'time'],
      [{ partySize: '0' }, 'partySize'],
      [{ partySize: '501' }, 'partySize'],
      [{ partySize: '2.5' }, 'partySize'],
      [{ partySize: 'abc' }, 'partySize'],
      [{ venueId: 'nope' }, 'venueId'],
    ];
    for (const [query, field] of cases) {
      const res = await availability(api, venueId, query);
      expect(res.status, JSON.stringify(query)).toBe(400);
      expect(res.body.error.details.fields, JSON.stringify(query)).toContain(field);
    }
    const missing = await api.get(`/availability?venueId=${venueId}`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.fields.sort()).toEqual(['partySize', 'serviceDate', 'time']);
    const repeated = await api.get(`/availability?venueId=${venueId}&serviceDate=${tomorrow}&time=19:00&partySize=2&partySize=3`);
    expect(repeated.status).toBe(400);
    const days = await api.get(`/availability/days?venueId=${venueId}&from=2026-02-30&to=${tomorrow}&partySize=2`);
    expect(days.status).toBe(400);
    expect(days.body.error.details.fields).toEqual(['from']);
    const other = await setup();
    expect((await availability(other.api, venueId)).status).toBe(404);
    expect((await other.api.get(`/availability/days?venueId=${venueId}&from=${tomorrow}&to=${tomorrow}&partySize=2`)).status).toBe(404);
  });

  it('takes service dates from 0001-01-02 to 9999-12-28: the edges answer, a day beyond is a 400 naming the field', async () => {
    const { api, venueId } = await setup();
    for (const serviceDate of ['0001-01-02', '9999-12-28']) {
      expect((await availability(api, venueId, { serviceDate })).body).toMatchObject({ available: false, alternatives: [] });
      expect((await book(api, venueId, { serviceDate })).body.error).toMatchObject({ code: 'no_availability' });
    }
    for (const serviceDate of ['0001-01-01', '9999-12-29', '9999-12-31']) {
      const checked = await availability(api, venueId, { serviceDate });
      expect(checked.status).toBe(400);
      expect(checked.body.error.details.fields).toEqual(['serviceDate']);
      expect((await book(api, venueId, { serviceDate })).body.error.details.fields).toEqual(['serviceDate']);
    }
    const days = await api.get(`/availability/days?venueId=${venueId}&from=9999-12-01&to=9999-12-28&partySize=2`);
    expect(days.status).toBe(200);
    expect(days.body.data.every((d: { slotCount: number }) => d.slotCount === 0)).toBe(true);
    expect((await api.get(`/availability/days?venueId=${venueId}&from=0001-01-02&to=0001-01-31&partySize=2`)).status).toBe(200);
    expect((await api.get(`/availability/slots?venueId=${venueId}&serviceDate=9999-12-28&partySize=2`)).body.data).toEqual([]);
  });

  it('moves a party already at the venue without the booking window, but not past the last service date', async () => {
    const { api, venueId } = await setup({}, { venue: { timezone: 'America/New_York', countryCode: 'US' } });
    const arrived = (await book(api, venueId)).body.reservation;
    expect((await api.patch(`/reservations/${arrived.id}`, { status: 'arrived' })).status).toBe(200);
    // 22:00 in New York on 9999-12-31 would be 10000-01-01 in UTC.
    const beyond = await api.patch(`/reservations/${arrived.id}`, { serviceDate: '9999-12-31', time: '22:00' });
    expect(beyond.status).toBe(400);
    expect(beyond.body.error.details.fields).toEqual(['serviceDate']);
    const last = await api.patch(`/reservations/${arrived.id}`, { serviceDate: '9999-12-28', time: '22:00' });
    expect(last.status).toBe(200);
    expect(last.body.reservation.startsAt).toBe('9999-12-29T03:00:00.000Z');
  });
});

type Status = 'created' | 'confirmed' | 'arrived' | 'seated' | 'released' | 'completed' | 'no_show' | 'cancelled';

/** The PATCH steps that bring a new reservation to each status. */
const pathTo: Record<Status, string[]> = {
  created: [],
  confirmed: ['confirmed'],
  arrived: ['arrived'],
  seated: ['seated'],
  released: ['seated', 'released'],
  completed: ['seated', 'completed'],
  no_show: ['no_show'],
  cancelled: [],
};

/** docs/reservations.md: the allowed status moves of PATCH. */
const allowed: Record<Status, string[]> = {
  created: ['confirmed', 'arrived', 'seated', 'no_show'],
  confirmed: ['arrived', 'seated', 'no_show'],
  arrived: ['seated'],
  seated: ['released', 'completed'],
  released: ['completed'],
  completed: [],
  no_show: ['arrived', 'seated'],
  cancelled: [],
};

const patchStatuses = ['confirmed', 'arrived', 'seated', 'released', 'completed', 'no_show'] as const;

describe('status transitions (docs/reservations.md)', () => {
  async function reservationIn(api: Client, venueId: string, status: Status, time: string) {
    const r = (await book(api, venueId, { time })).body.reservation;
    for (const step of pathTo[status]) expect((await api.patch(`/reservations/${r.id}`, { status: step })).status).toBe(200);
    if (status === 'cancelled') expect((await api.delete(`/reservations/${r.id}`)).status).toBe(200);
    return (await api.get(`/reservations/${r.id}`)).body.reservation;
  }

  it('allows exactly the moves of the table, answers 200 unchanged for the same status, 400 invalid_transition otherwise', async () => {
    const tables = Array.from({ length: 12 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId } = await setup({ tables });
    let minute = 0;
    const nextTime = () => {
      const m = 18 * 60 + 15 * (minute++ % 17);
      return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
    };
    for (const from of Object.keys(pathTo) as Status[]) {
      for (const to of patchStatuses) {
        const r = await reservationIn(api, venueId, from, nextTime());
        expect(r.status).toBe(from);
        const res = await api.patch(`/reservations/${r.id}`, { status: to });
        const label = `${from} → ${to}`;
        if (to === from) {
          expect(res.status, label).toBe(200);
          expect(res.body.reservation, label).toEqual(r);
        } else if (allowed[from].includes(to)) {
          expect(res.status, label).toBe(200);
          expect(res.body.reservation.status, label).toBe(to);
        } else {
          expect(res.status, label).toBe(400);
          expect(res.body.error, label).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_transition' } });
          expect((await api.get(`/reservations/${r.id}`)).body.reservation, label).toEqual(r);
        }
      }
    }
  }, 60_000);

  it('cancels from created, confirmed and arrived; 200 unchanged when cancelled; 400 invalid_transition from the rest', async () => {
    const tables = Array.from({ length: 8 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId } = await setup({ tables });
    for (const [i, from] of (Object.keys(pathTo) as Status[]).entries()) {
      const r = await reservationIn(api, venueId, from, `${18 + Math.floor(i / 4)}:${String((i % 4) * 15).padStart(2, '0')}`);
      const res = await api.delete(`/reservations/${r.id}`);
      if (from === 'cancelled') {
        expect(res.status).toBe(200);
        expect(res.body.reservation).toEqual(r);
      } else if (['created', 'confirmed', 'arrived'].includes(from)) {
        expect(res.status, from).toBe(200);
        expect(res.body.reservation.status).toBe('cancelled');
        expect(res.body.livemode).toBe(true);
        expect(await eventTypesOf(r.id)).toContain('reservation_cancelled');
      } else {
        expect(res.status, from).toBe(400);
        expect(res.body.error.details.reason, from).toBe('invalid_transition');
      }
    }
  }, 60_000);
});

describe('events of reservation changes (docs/webhooks.md, docs/reservations.md)', () => {
  it('emits the events of one change in catalogue order, and GET /events keeps the data as of each event', async () => {
    const { api, venueId } = await setup();
    const created = (await book(api, venueId, { notes: 'first', guest: { phone: '3471234567', firstName: 'Ada' } })).body.reservation;
    const changed = await api.patch(`/reservations/${created.id}`, { status: 'confirmed', notes: 'second', time: '19:30' });
    expect(changed.status).toBe(200);
    expect(await eventTypesOf(created.id)).toEqual(['reservation_created', 'reservation_confirmed', 'reservation_modified']);
    await api.patch(`/reservations/${created.id}`, { status: 'seated' });
    await api.patch(`/reservations/${created.id}`, { status: 'completed' });
    expect(await eventTypesOf(created.id)).toEqual([
      'reservation_created',
      'reservation_confirmed',
      'reservation_modified',
      'guest_seated',
      'table_released',
      'meal_completed',
    ]);
    const listed = await api.get(`/events?venueId=${venueId}&limit=200`);
    expect(listed.status).toBe(200);
    const ofReservation = listed.body.data.filter((e: { type: string }) => e.type !== 'guest_profile_changed');
    const first = ofReservation.find((e: { type: string }) => e.type === 'reservation_created');
    expect(first.data.reservation).toMatchObject({
      id: created.id,
      notes: 'first',
      time: '19:00',
      status: 'created',
      updatedAt: created.updatedAt,
    });
    expect(first.data.reservation.guest).toEqual({ name: 'Ada', allergies: null, allergens: [] });
    const confirmed = ofReservation.find((e: { type: string }) => e.type === 'reservation_confirmed');
    expect(confirmed.data.reservation).toMatchObject({ notes: 'second', time: '19:30', status: 'confirmed' });
    const completed = ofReservation.find((e: { type: string }) => e.type === 'meal_completed');
    expect(completed.data.reservation.status).toBe('completed');
  });

  it('a forced booking and the removal of a table emit reservation_needs_attention after the others', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const first = (await book(api, venueId)).body.reservation;
    const forced = await book(api, venueId, { force: true });
    expect(forced.status).toBe(201);
    expect(forced.body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true, table: null });
    expect(await eventTypesOf(forced.body.reservation.id)).toEqual(['reservation_created', 'reservation_needs_attention']);
    const removed = await api.patch(`/reservations/${first.id}`, { tableId: null, notes: 'moved out' });
    expect(removed.body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true, table: null });
    expect(await eventTypesOf(first.id)).toEqual(['reservation_created', 'reservation_modified', 'reservation_needs_attention']);
    // force does not pass other reasons.
    expect((await book(api, venueId, { force: true, time: '12:00' })).body.error.details.reason).toBe('no_shift');
  });
});

describe('PATCH /reservations/{id} details', () => {
  it('accepts If-Match quoted, bare or weak, and the body version; stale → 409 version_mismatch; nothing changes', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const v1 = r.updatedAt;
    const a = await api.patch(`/reservations/${r.id}`, { notes: 'a' }, { 'if-match': v1 });
    expect(a.status).toBe(200);
    const v2 = a.body.reservation.updatedAt;
    expect(v2 > v1).toBe(true);
    const b = await api.patch(`/reservations/${r.id}`, { notes: 'b' }, { 'if-match': `"${v2}"` });
    expect(b.status).toBe(200);
    const stale = await api.patch(`/reservations/${r.id}`, { time: '20:00' }, { 'if-match': `"${v2}"` });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'conflict', details: { reason: 'version_mismatch' } });
    expect((await api.get(`/reservations/${r.id}`)).body.reservation).toEqual(b.body.reservation);
    const staleDelete = await api.delete(`/reservations/${r.id}`, { 'if-match': v2 });
    expect(staleDelete.status).toBe(409);
    const ok = await api.patch(`/reservations/${r.id}`, { notes: 'c', version: b.body.reservation.updatedAt });
    expect(ok.status).toBe(200);
    // Instants as strings with another offset denote the same version.
    const v4 = new Date(ok.body.reservation.updatedAt);
    const shifted = new Date(v4.getTime() + 2 * 3600_000).toISOString().replace('Z', '+02:00');
    expect((await api.patch(`/reservations/${r.id}`, { notes: 'd' }, { 'if-match': shifted })).status).toBe(200);
  });

  it('answers 400 (never 500) for hostile bodies', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const bodies: [unknown, string][] = [
      [{ serviceDate: '2026-02-30' }, 'serviceDate'],
      [{ time: '24:00' }, 'time'],
      [{ partySize: 0 }, 'partySize'],
      [{ partySize: '2' }, 'partySize'],
      [{ partySize: null }, 'partySize'],
      [{ status: 'cancelled' }, 'status'],
      [{ status: 'created' }, 'status'],
      [{ tableId: 'x' }, 'tableId'],
      [{ externalRef: 'x'.repeat(201) }, 'externalRef'],
      [{ notes: ['a'] }, 'notes'],
      [{ version: 'yesterday' }, 'version'],
      [{ serviceDate: null }, 'serviceDate'],
      [{ time: null }, 'time'],
      [{ status: null }, 'status'],
    ];
    for (const [body, field] of bodies) {
      const res = await api.patch(`/reservations/${r.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.fields, JSON.stringify(body)).toContain(field);
    }
    for (const raw of ['[]', '"x"', '12', 'null']) {
      const res = await api.request('PATCH', `/reservations/${r.id}`, { rawBody: raw, headers: { 'content-type': 'application/json' } });
      expect(res.status, raw).toBe(400);
    }
    const huge = await api.patch(`/reservations/${r.id}`, { notes: 'x'.repeat(100_000) });
    expect(huge.status).toBe(400);
    const empty = await api.patch(`/reservations/${r.id}`, {});
    expect(empty.status).toBe(200);
    expect(empty.body.reservation.updatedAt).toBe(r.updatedAt);
  });

  it("answers 404 for unknown, malformed and other organisations' ids", async () => {
    const { api } = await setup();
    expect((await api.patch('/reservations/00000000-0000-4000-8000-000000000000', { notes: 'x' })).status).toBe(404);
    expect((await api.delete('/reservations/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await api.get('/reservations/123')).body.error.code).toBe('not_found');
  });
});

describe('POST /reservations details', () => {
  it('finds or creates the guest by phone read with the venue country', async () => {
    const { api, venueId } = await setup({}, { venue: { countryCode: 'US', timezone: 'America/New_York' } });
    const usTomorrow = localDate(1, 'America/New_York');
    const a = await api.post('/reservations', {
      venueId,
      serviceDate: usTomorrow,
      time: '19:00',
      partySize: 2,
      guest: { phone: '(415) 555-2671', firstName: 'Sam' },
    });
    expect(a.status).toBe(201);
    expect(a.body.reservation.guestDetails).toMatchObject({ phone: '+14155552671', firstName: 'Sam', name: 'Sam' });
    const b = await api.post('/reservations', {
      venueId,
      serviceDate: usTomorrow,
      time: '20:00',
      partySize: 2,
      guest: { phone: '+1 415-555-2671' },
    });
    expect(b.body.reservation.guestId).toBe(a.body.reservation.guestId);
    const bad = await api.post('/reservations', { venueId, serviceDate: usTomorrow, time: '20:00', partySize: 2, guest: { phone: '12' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toMatchObject({ field: 'phone', fields: ['phone'] });
  });

  it('answers guest and guestDetails null without guests:read, in every answer', async () => {
    const { venueId, organisationId } = await setup();
    const writer = client(server.url, await createKey(organisationId, { scopes: ['reservations:read', 'reservations:write'] }));
    const created = await book(writer, venueId, { guest: { phone: '3471234567', firstName: 'Ada' } });
    expect(created.status).toBe(201);
    expect(created.body.reservation).toMatchObject({ guest: null, guestDetails: null, guestId: expect.any(String) });
    const patched = await writer.patch(`/reservations/${created.body.reservation.id}`, { notes: 'x' });
    expect(patched.body.reservation).toMatchObject({ guest: null, guestDetails: null });
    const listed = await writer.get('/reservations');
    expect(listed.body.data[0]).toMatchObject({ guest: null, guestDetails: null });
    const cancelled = await writer.delete(`/reservations/${created.body.reservation.id}`);
    expect(cancelled.body.reservation).toMatchObject({ guest: null, guestDetails: null });
  });

  it('answers 400 (never 500) for hostile bodies', async () => {
    const { api, venueId } = await setup();
    const bodies: [Record<string, unknown>, string][] = [
      [{ guest: [] }, 'guest'],
      [{ guest: null }, 'guest'],
      [{ guest: { phone: 3471234567 } }, 'guest.phone'],
      [{ guest: { phone: '3471234567', allergens: ['bacon'] } }, 'guest.allergens.0'],
      [{ serviceTags: 'vip' }, 'serviceTags'],
      [{ partySize: 501 }, 'partySize'],
      [{ partySize: '2' }, 'partySize'],
      [{ source: 'waitlist' }, 'source'],
      [{ source: 'import' }, 'source'],
      [{ status: 'seated' }, 'status'],
      [{ force: 'yes' }, 'force'],
      [{ notes: 'x'.repeat(100_000) }, 'notes'],
      [{ serviceDate: '2026-13-01' }, 'serviceDate'],
      [{ time: '19:60' }, 'time'],
      [{ venueId: null }, 'venueId'],
      [{ tableId: 'T1' }, 'tableId'],
    ];
    for (const [extra, field] of bodies) {
      const res = await book(api, venueId, extra);
      expect(res.status, JSON.stringify(extra).slice(0, 80)).toBe(400);
      expect(res.body.error.details.fields, JSON.stringify(extra).slice(0, 80)).toContain(field);
    }
    const unknownTable = await book(api, venueId, { tableId: '00000000-0000-4000-8000-000000000000' });
    expect(unknownTable.status).toBe(400);
    expect(unknownTable.body.error.details.fields).toEqual(['tableId']);
    expect((await api.request('POST', '/reservations', { rawBody: '[1]', headers: { 'content-type': 'application/json' } })).status).toBe(
      400,
    );
  });

  it('answers 404 for a venue of another organisation or outside a limited key', async () => {
    const a = await setup();
    const b = await setup();
    expect((await book(b.api, a.venueId)).status).toBe(404);
    expect((await availability(b.api, a.venueId)).status).toBe(404);
  });
});

describe('GET /reservations', () => {
  it('validates list parameters and filters', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    for (const query of [
      'limit=0',
      'limit=201',
      'limit=x',
      'cursor=garbage',
      'changedAfter=yesterday',
      'from=2026-02-30',
      'to=x',
      'venueId=1',
      'guestId=1',
      'status=',
      `externalRef=${'x'.repeat(201)}`,
      'bogus=1',
    ]) {
      const res = await api.get(`/reservations?${query}`);
      expect(res.status, query).toBe(400);
      expect(res.body.error.code, query).toBe('invalid_request');
      expect(res.body.error.details.fields.length, query).toBeGreaterThan(0);
    }
    const since = await api.get(`/reservations?changedAfter=${encodeURIComponent(new Date(Date.now() - 60_000).toISOString())}`);
    expect(since.body.data.map((x: { id: string }) => x.id)).toEqual([r.id]);
    expect((await api.get('/reservations?status=created&status=confirmed')).body.data).toHaveLength(1);
    expect((await api.get(`/reservations?venueId=${venueId}&from=${localDate(2)}`)).body.data).toEqual([]);
    expect((await api.get('/reservations?limit=200')).status).toBe(200);
  });
});

describe('waiting list (docs/operations.md "Waiting list")', () => {
  it('goes through its statuses with the documented codes, shape and events', async () => {
    const { api, venueId } = await setup();
    const created = await api.post('/waitlist', {
      venueId,
      serviceDate: tomorrow,
      partySize: 2,
      name: 'Ada Lovelace',
      phone: '347 123 4567',
      quotedWaitMinutes: 20,
    });
    expect(created.status).toBe(201);
    const entry = created.body.entry;
    expect(Object.keys(entry).sort()).toEqual(
      [
        'createdAt',
        'estimatedSeatTime',
        'estimatedWaitMinutes',
        'guestId',
        'id',
        'name',
        'notes',
        'notifiedAt',
        'partySize',
        'phone',
        'position',
        'quotedWaitMinutes',
        'reservationId',
        'serviceDate',
        'status',
        'updatedAt',
        'venueId',
      ].sort(),
    );
    expect(entry).toMatchObject({
      venueId,
      serviceDate: tomorrow,
      partySize: 2,
      name: 'Ada Lovelace',
      phone: '+393471234567',
      status: 'waiting',
      position: 1,
      quotedWaitMinutes: 20,
      notifiedAt: null,
      reservationId: null,
    });
    expect(entry.createdAt).toMatch(instant);
    expect(created.body.livemode).toBe(true);
    expect(await eventTypesOf(entry.id)).toEqual(['waitlist_entry_created']);

    const notified = await api.post(`/waitlist/${entry.id}/notify`);
    expect(notified.status).toBe(200);
    expect(notified.body.entry).toMatchObject({ status: 'notified', notifiedAt: expect.stringMatching(instant) });
    const converted = await api.post(`/waitlist/${entry.id}/convert`, { time: '19:00' });
    expect(converted.status).toBe(200);
    expect(converted.body.entry).toMatchObject({ status: 'converted', reservationId: converted.body.reservation.id });
    expect(converted.body.reservation).toMatchObject({ source: 'waitlist', guestId: entry.guestId });
    for (const [method, path] of [
      ['POST', `/waitlist/${entry.id}/notify`],
      ['POST', `/waitlist/${entry.id}/convert`],
      ['DELETE', `/waitlist/${entry.id}`],
      ['PATCH', `/waitlist/${entry.id}`],
    ]) {
      const res = await api.request(method, path, {
        body: method === 'PATCH' ? { partySize: 3 } : method === 'POST' && path.endsWith('convert') ? { time: '20:00' } : undefined,
      });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(res.body.error.details.reason).toBe('invalid_transition');
    }

    const second = (await api.post('/waitlist', { venueId, serviceDate: tomorrow, partySize: 3, name: 'Bob' })).body.entry;
    expect(second.position).toBe(2);
    const cancelled = await api.delete(`/waitlist/${second.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.entry.status).toBe('cancelled');
    const again = await api.delete(`/waitlist/${second.id}`);
    expect(again.status).toBe(200);
    expect(again.body.entry).toEqual(cancelled.body.entry);
    expect(await eventTypesOf(second.id)).toEqual(['waitlist_entry_created', 'waitlist_entry_cancelled']);

    const list = await api.get(`/waitlist?venueId=${venueId}&serviceDate=${tomorrow}&status=cancelled`);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([second.id]);
    expect(list.body.nextCursor).toBeNull();
  });

  it('answers 400 (never 500) for hostile inputs', async () => {
    const { api, venueId } = await setup();
    const entry = (await api.post('/waitlist', { venueId, partySize: 2, name: 'Ada' })).body.entry;
    const posts: Record<string, unknown>[] = [
      { venueId, partySize: 501, name: 'x' },
      { venueId, partySize: '2', name: 'x' },
      { venueId, partySize: 2, name: 'x'.repeat(100_000) },
      { venueId, partySize: 2, name: ['x'] },
      { venueId, partySize: 2, name: 'x', serviceDate: '2026-02-30' },
      { venueId, partySize: 2, name: 'x', quotedWaitMinutes: -1 },
      { venueId, partySize: 2, name: 'x', guestId: 'nope' },
      { venueId: null, partySize: 2, name: 'x' },
      { venueId, partySize: 2, phone: null },
    ];
    for (const body of posts) {
      const res = await api.post('/waitlist', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
    }
    for (const body of [{ partySize: 0 }, { phone: '12' }, { status: 'waiting' }, { quotedWaitMinutes: 'x' }, { partySize: null }]) {
      const res = await api.patch(`/waitlist/${entry.id}`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const body of [{ time: '24:00' }, { tableId: 'x' }, { time: null }, { extra: 1 }]) {
      const res = await api.post(`/waitlist/${entry.id}/convert`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const query of ['serviceDate=2026-02-30', 'limit=0', 'venueId=x', 'cursor=zz']) {
      expect((await api.get(`/waitlist?${query}`)).status, query).toBe(400);
    }
    expect((await api.post('/waitlist/00000000-0000-4000-8000-000000000000/notify')).status).toBe(404);
    for (const res of [
      await api.post('/waitlist', { venueId, partySize: 2, phone: '12' }),
      await api.patch(`/waitlist/${entry.id}`, { phone: '12' }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.error.details).toMatchObject({ field: 'phone', fields: ['phone'] });
    }
  });
});

describe('POST /imports/reservations (docs/operations.md "Reservation imports")', () => {
  async function finished(api: Client, id: string) {
    await runImport(id);
    const res = await api.get(`/imports/${id}`);
    expect(res.status).toBe(200);
    return res.body.import;
  }

  it('imports past and future rows with the documented rules and rejection codes, without events', async () => {
    const { api, venueId, organisationId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const stranger = await createTenant();
    const existing = (await book(api, venueId, { time: '21:00', externalRef: 'crm-1' })).body.reservation;
    const rows = [
      {
        venueId,
        serviceDate: localDate(-3),
        time: '19:00',
        partySize: 2,
        phone: '347 111 2222',
        guestName: 'Ada Lovelace',
        notes: 'old',
        externalRef: 'p-1',
        channel: 'thefork',
      },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, externalRef: 'f-1', durationMinutes: 60 },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, externalRef: 'f-2' },
      { venueId, serviceDate: tomorrow, time: '21:30', partySize: 3, externalRef: 'crm-1' },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, externalRef: 'f-1' },
      { venueId: stranger.venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, phone: '12' },
      { venueId, serviceDate: '2026-02-30', time: '25:00', partySize: 0 },
      { venueId, serviceDate: tomorrow, time: '19:00' },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, durationMinutes: 721 },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, externalRef: 'x'.repeat(201) },
    ];
    const submitted = await api.post('/imports/reservations', { rows });
    expect(submitted.status).toBe(202);
    expect(submitted.body.import).toMatchObject({
      kind: 'reservations',
      status: 'processing',
      totalRows: rows.length,
      createdRows: 0,
      rejectedRows: 0,
      rejections: [],
      completedAt: null,
    });
    for (const key of [
      'id',
      'kind',
      'status',
      'totalRows',
      'createdRows',
      'updatedRows',
      'rejectedRows',
      'rejections',
      'createdAt',
      'completedAt',
    ]) {
      expect(submitted.body.import).toHaveProperty(key);
    }
    expect(submitted.body.import.createdAt).toMatch(instant);
    const result = await finished(api, submitted.body.import.id);
    expect(result).toMatchObject({
      status: 'completed',
      createdRows: 3,
      updatedRows: 1,
      rejectedRows: 7,
      completedAt: expect.stringMatching(instant),
    });
    expect(result.rejections).toEqual([
      { row: 4, code: 'duplicate_row', message: expect.any(String), fields: ['externalRef'] },
      { row: 5, code: 'venue_not_found', message: expect.any(String), fields: ['venueId'] },
      { row: 6, code: 'invalid_phone', message: expect.any(String), fields: ['phone'] },
      { row: 7, code: 'invalid_field', message: expect.any(String), fields: expect.arrayContaining(['serviceDate', 'time', 'partySize']) },
      { row: 8, code: 'invalid_field', message: expect.any(String), fields: ['partySize'] },
      { row: 9, code: 'invalid_field', message: expect.any(String), fields: ['durationMinutes'] },
      { row: 10, code: 'invalid_field', message: expect.any(String), fields: ['externalRef'] },
    ]);

    const byRef = async (ref: string) => (await api.get(`/reservations?externalRef=${ref}`)).body.data[0];
    expect(await byRef('p-1')).toMatchObject({
      source: 'import',
      sourceDetail: 'thefork',
      status: 'completed',
      tableAssigned: false,
      table: null,
      needsAttention: false,
      notes: 'old',
      guestDetails: { phone: '+393471112222', firstName: 'Ada', lastName: 'Lovelace', visitCount: 1 },
    });
    const f1 = await byRef('f-1');
    expect(f1).toMatchObject({ source: 'import', status: 'created', tableAssigned: true, needsAttention: false });
    expect(new Date(f1.endsAt).getTime() - new Date(f1.startsAt).getTime()).toBe(60 * 60_000);
    expect(await byRef('f-2')).toMatchObject({
      source: 'import',
      status: 'created',
      tableAssigned: false,
      needsAttention: true,
      table: null,
    });
    expect(await byRef('crm-1')).toMatchObject({ id: existing.id, time: '21:30', partySize: 3 });
    const imported = await db().select({ id: reservations.id }).from(reservations).where(eq(reservations.source, 'import'));
    for (const { id } of imported) expect(await eventTypesOf(id)).toEqual([]);
    expect(await eventTypesOf(existing.id)).toEqual(['reservation_created']);
    void organisationId;
  });

  it('rejects a row outside the service dates taken (0001-01-02 to 9999-12-28) alone, and completes the rest', async () => {
    const { api, venueId } = await setup();
    const rows = [
      { venueId, serviceDate: '9999-12-31', time: '23:30', partySize: 2, durationMinutes: 120 },
      { venueId, serviceDate: '0001-01-01', time: '00:30', partySize: 2 },
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 },
    ];
    const submitted = await api.post('/imports/reservations', { rows });
    const result = await finished(api, submitted.body.import.id);
    expect(result).toMatchObject({ status: 'completed', createdRows: 1, rejectedRows: 2 });
    expect(result.rejections).toEqual([
      { row: 0, code: 'invalid_field', message: expect.any(String), fields: ['serviceDate'] },
      { row: 1, code: 'invalid_field', message: expect.any(String), fields: ['serviceDate'] },
    ]);
  });

  it('answers 202 for a new import, 200 with its current state for a replay, 422 for another body', async () => {
    const { api, venueId } = await setup();
    const body = { rows: [{ venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 }] };
    const first = await api.post('/imports/reservations', body, { 'idempotency-key': 'imp-1' });
    expect(first.status).toBe(202);
    await runImport(first.body.import.id);
    const replay = await api.post('/imports/reservations', body, { 'idempotency-key': 'imp-1' });
    expect(replay.status).toBe(200);
    expect(replay.body.import).toMatchObject({ id: first.body.import.id, status: 'completed', createdRows: 1 });
    expect(replay.body.livemode).toBe(true);
    const other = await api.post('/imports/reservations', { rows: [{ ...body.rows[0], partySize: 3 }] }, { 'idempotency-key': 'imp-1' });
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
  });

  it('validates the request: 1 to 1000 rows, an object body, imports:write', async () => {
    const { api, venueId, organisationId } = await setup();
    const row = { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 };
    for (const body of [
      { rows: [] },
      { rows: Array.from({ length: 1001 }, () => row) },
      { rows: 'x' },
      {},
      { rows: [row], extra: 1 },
      { rows: null },
    ]) {
      const res = await api.post('/imports/reservations', body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
    }
    expect(
      (await api.request('POST', '/imports/reservations', { rawBody: '[]', headers: { 'content-type': 'application/json' } })).status,
    ).toBe(400);
    const denied = await client(server.url, await createKey(organisationId, { scopes: ['reservations:write'] })).post(
      '/imports/reservations',
      { rows: [row] },
    );
    expect(denied.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'imports:write' } });
    expect((await api.post('/imports/reservations', { rows: Array.from({ length: 1000 }, () => row) })).status).toBe(202);
  });
});
