import { and, asc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, guests } from '../../src/db/schema/index.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate, type VenueFixtureOptions } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);

/** The published events (history-only rows aside), oldest first. */
async function eventTypesOf(reservationId: string): Promise<string[]> {
  const rows = await db()
    .select({ type: events.type })
    .from(events)
    .where(and(eq(events.subjectId, reservationId), eq(events.published, true)))
    .orderBy(asc(events.createdAt));
  return rows.map((r) => r.type);
}

async function setup(options: VenueFixtureOptions = {}) {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId, options);
  return { ...t, fixture, api: client(server.url, t.key) };
}

function book(api: Client, venueId: string, extra: Record<string, unknown> = {}) {
  return api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, ...extra });
}

describe('POST /reservations', () => {
  it('creates a reservation with its table and guest, in the full shape', async () => {
    const { api, venueId, fixture } = await setup();
    const res = await book(api, venueId, {
      notes: 'window please',
      externalRef: 'ext-1',
      guest: { phone: '347 123 4567', firstName: 'Ada', lastName: 'Lovelace', allergens: ['nuts'] },
    });
    expect(res.status).toBe(201);
    const r = res.body.reservation;
    expect(r).toMatchObject({
      venueId,
      serviceDate: tomorrow,
      time: '19:00',
      partySize: 2,
      status: 'created',
      tableAssigned: true,
      needsAttention: false,
      notes: 'window please',
      source: 'api',
      sourceDetail: 'test key',
      externalRef: 'ext-1',
      guest: { name: 'Ada Lovelace', allergies: null, allergens: ['nuts'] },
      guestDetails: { phone: '+393471234567', firstName: 'Ada', lastName: 'Lovelace', visitCount: 0, noShowCount: 0 },
      table: {
        tableId: fixture.tableIds.T2,
        tableCombinationId: null,
        tables: [{ id: fixture.tableIds.T2, name: 'T2', minSeats: 1, maxSeats: 2 }],
      },
    });
    expect(r.guestId).toBe(r.guestDetails.id);
    expect(new Date(r.endsAt).getTime() - new Date(r.startsAt).getTime()).toBe(90 * 60_000);
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created']);

    const read = await api.get(`/reservations/${r.id}`);
    expect(read.status).toBe(200);
    expect(read.body.reservation).toEqual(r);
    expect(read.headers.get('etag')).toBe(`"${r.updatedAt}"`);
  });

  it('finds the guest by normalised phone instead of creating another', async () => {
    const { api, venueId } = await setup();
    const a = await book(api, venueId, { guest: { phone: '+39 347 123 4567' } });
    const b = await book(api, venueId, { time: '20:00', guest: { phone: '3471234567', firstName: 'Other' } });
    expect(b.body.reservation.guestId).toBe(a.body.reservation.guestId);
    const rows = await db().select().from(guests).where(eq(guests.venueId, venueId));
    expect(rows).toHaveLength(1);
  });

  it('hides guest data without guests:read', async () => {
    const { api, venueId, organisationId } = await setup();
    const created = await book(api, venueId, { guest: { phone: '3471234567', firstName: 'Ada' } });
    const limited = await createKey(organisationId, { scopes: ['reservations:read', 'reservations:write'] });
    const res = await client(server.url, limited).get(`/reservations/${created.body.reservation.id}`);
    expect(res.body.reservation).toMatchObject({ guestId: created.body.reservation.guestId, guest: null, guestDetails: null });
    expect(res.body.reservation.table).not.toBeNull();
  });

  it('validates the body', async () => {
    const { api, venueId } = await setup();
    const bad = await api.post('/reservations', { venueId, serviceDate: 'tomorrow', time: '7pm', partySize: 0, extra: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields.sort()).toEqual(['extra', 'partySize', 'serviceDate', 'time']);
    const missing = await api.post('/reservations', { venueId, partySize: 2 });
    expect(missing.body.error.details.fields).toEqual(['serviceDate', 'time']);
    const phone = await book(api, venueId, { guest: { phone: '12' } });
    expect(phone.status).toBe(400);
    expect(phone.body.error.details).toMatchObject({ field: 'phone', fields: ['phone'] });
    const unknownGuest = await book(api, venueId, { guestId: '00000000-0000-4000-8000-000000000000' });
    expect(unknownGuest.body.error.details.fields).toEqual(['guestId']);
    const longRef = await book(api, venueId, { externalRef: 'x'.repeat(201) });
    expect(longRef.body.error.details.fields).toEqual(['externalRef']);
    expect((await book(api, venueId, { source: 'import' })).status).toBe(400);
  });

  it('answers 409 no_availability with reason and alternatives', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    expect((await book(api, venueId)).status).toBe(201);
    const res = await book(api, venueId, { time: '19:30' });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('no_availability');
    expect(res.body.error.details.reason).toBe('no_table');
    expect(res.body.error.details.alternatives[0]).toMatchObject({ time: '20:30', seats: 4, turnTimeMinutes: 90 });
    const closed = await book(api, venueId, { time: '16:00' });
    expect(closed.body.error.details).toMatchObject({ reason: 'no_shift' });
  });

  it('keeps externalRef unique per venue', async () => {
    const { api, venueId } = await setup();
    expect((await book(api, venueId, { externalRef: 'dup' })).status).toBe(201);
    const dup = await book(api, venueId, { time: '20:00', externalRef: 'dup' });
    expect(dup.status).toBe(409);
    expect(dup.body.error).toMatchObject({ code: 'conflict', details: { fields: ['externalRef'] } });
  });

  it('books an explicit table or combination that is free and fits', async () => {
    const { api, venueId, fixture } = await setup({
      tables: [
        { name: 'A', minSeats: 2, maxSeats: 4 },
        { name: 'B', minSeats: 2, maxSeats: 4 },
        { name: 'X', minSeats: 1, maxSeats: 2, isBlocked: true },
      ],
      combinations: [['A', 'B']],
    });
    const onB = await book(api, venueId, { tableId: fixture.tableIds.B });
    expect(onB.body.reservation.table).toMatchObject({ tableId: fixture.tableIds.B });
    const taken = await book(api, venueId, { tableId: fixture.tableIds.B, time: '19:30' });
    expect(taken.status).toBe(409);
    expect(taken.body.error.details.reason).toBe('no_table');
    const blocked = await book(api, venueId, { tableId: fixture.tableIds.X });
    expect(blocked.body.error.details.reason).toBe('table_blocked');
    const tooSmall = await book(api, venueId, { tableId: fixture.tableIds.A, partySize: 6 });
    expect(tooSmall.body.error.details.reason).toBe('no_table');
    const combination = await book(api, venueId, { tableCombinationId: fixture.combinationIds[0], partySize: 7, time: '21:00' });
    expect(combination.status).toBe(201);
    expect(combination.body.reservation.table).toMatchObject({
      tableId: null,
      tableCombinationId: fixture.combinationIds[0],
      tables: [{ name: 'A' }, { name: 'B' }],
    });
    const unknown = await book(api, venueId, { tableId: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.details.fields).toEqual(['tableId']);
  });

  it('books anyway with force, without a table and needing attention', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 2 }] });
    expect((await book(api, venueId)).status).toBe(201);
    const forced = await book(api, venueId, { force: true, partySize: 2 });
    expect(forced.status).toBe(201);
    expect(forced.body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true, table: null });
    expect(await eventTypesOf(forced.body.reservation.id)).toEqual(['reservation_created', 'reservation_needs_attention']);
    // force does not bypass the shift rules.
    expect((await book(api, venueId, { force: true, time: '16:00' })).body.error.details.reason).toBe('no_shift');
  });

  it('seats a walk-in now', async () => {
    const { api, venueId } = await setup({ shifts: [{ name: 'All day', startTime: '00:00', lastSeatingTime: '23:59', endTime: '23:59' }] });
    const before = Date.now();
    const res = await api.post('/reservations', { venueId, partySize: 2, source: 'walk_in' });
    expect(res.status).toBe(201);
    const r = res.body.reservation;
    expect(r).toMatchObject({ status: 'seated', source: 'walk_in', serviceDate: localDate(0), tableAssigned: true });
    expect(new Date(r.startsAt).getTime()).toBeGreaterThan(before - 61_000);
    expect(new Date(r.startsAt).getTime()).toBeLessThanOrEqual(Date.now());
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created']);
  });

  it('creates confirmed when asked and names the source', async () => {
    const { api, venueId } = await setup();
    const res = await book(api, venueId, { status: 'confirmed', source: 'phone', sourceDetail: 'front desk' });
    expect(res.body.reservation).toMatchObject({ status: 'confirmed', source: 'phone', sourceDetail: 'front desk' });
    expect(await eventTypesOf(res.body.reservation.id)).toEqual(['reservation_created']);
  });
});

describe('status flow', () => {
  it('goes created → confirmed → arrived → seated → completed with the events and guest counters', async () => {
    const { api, venueId } = await setup();
    const created = (await book(api, venueId, { guest: { phone: '3471234567' } })).body.reservation;
    const steps: [string, string[]][] = [
      ['confirmed', ['reservation_confirmed']],
      ['arrived', ['guest_arrived']],
      ['seated', ['guest_seated']],
      ['completed', ['table_released', 'meal_completed']],
    ];
    let seen = ['reservation_created'];
    let last = created;
    for (const [status, emitted] of steps) {
      const res = await api.patch(`/reservations/${created.id}`, { status });
      expect(res.status).toBe(200);
      expect(res.body.reservation.status).toBe(status);
      expect(new Date(res.body.reservation.updatedAt).getTime()).toBeGreaterThan(new Date(last.updatedAt).getTime());
      last = res.body.reservation;
      seen = [...seen, ...emitted];
      expect((await eventTypesOf(created.id)).sort()).toEqual([...seen].sort());
    }
    expect(last.guestDetails).toMatchObject({ visitCount: 1 });
    const [event] = await db()
      .select()
      .from(events)
      .where(and(eq(events.type, 'meal_completed'), eq(events.subjectId, created.id)));
    expect(event).toMatchObject({ venueId, subjectType: 'reservation', livemode: true });
    expect((event.data as { reservation: { status: string } }).reservation.status).toBe('completed');
  });

  it('frees the table on release and on completion', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const r = (await book(api, venueId)).body.reservation;
    await api.patch(`/reservations/${r.id}`, { status: 'seated' });
    expect((await book(api, venueId, { time: '19:30' })).status).toBe(409);
    const released = await api.patch(`/reservations/${r.id}`, { status: 'released' });
    expect(released.body.reservation).toMatchObject({ status: 'released', tableAssigned: true });
    expect((await book(api, venueId, { time: '19:30' })).status).toBe(201);
    const completed = await api.patch(`/reservations/${r.id}`, { status: 'completed' });
    expect(completed.status).toBe(200);
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created', 'guest_seated', 'table_released', 'meal_completed']);
  });

  it('counts a no-show and takes it back when the guest arrives after all', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId, { guest: { phone: '3471234567' } })).body.reservation;
    const noShow = await api.patch(`/reservations/${r.id}`, { status: 'no_show' });
    expect(noShow.body.reservation.guestDetails.noShowCount).toBe(1);
    const late = await api.patch(`/reservations/${r.id}`, { status: 'seated' });
    expect(late.body.reservation).toMatchObject({
      status: 'seated',
      tableAssigned: true,
      needsAttention: false,
      guestDetails: { noShowCount: 0 },
    });
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created', 'reservation_no_show', 'guest_seated']);
  });

  it('a late guest whose table was given away needs attention', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const r = (await book(api, venueId)).body.reservation;
    await api.patch(`/reservations/${r.id}`, { status: 'no_show' });
    expect((await book(api, venueId, { time: '19:15' })).status).toBe(201);
    const late = await api.patch(`/reservations/${r.id}`, { status: 'arrived' });
    expect(late.body.reservation).toMatchObject({ status: 'arrived', tableAssigned: false, needsAttention: true, table: null });
    expect(await eventTypesOf(r.id)).toEqual([
      'reservation_created',
      'reservation_no_show',
      'guest_arrived',
      'reservation_needs_attention',
    ]);
  });

  it.each([
    ['created', 'released'],
    ['created', 'completed'],
    ['confirmed', 'confirmed'],
  ])('refuses or ignores %s → %s', async (start, target) => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId, { status: start })).body.reservation;
    const res = await api.patch(`/reservations/${r.id}`, { status: target });
    if (start === target) {
      expect(res.status).toBe(200);
      expect(res.body.reservation.updatedAt).toBe(r.updatedAt);
      expect(await eventTypesOf(r.id)).toEqual(['reservation_created']);
    } else {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_transition' } });
    }
  });

  it('refuses every move out of completed and cancelled', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    await api.delete(`/reservations/${r.id}`);
    for (const status of ['confirmed', 'arrived', 'seated', 'no_show']) {
      const res = await api.patch(`/reservations/${r.id}`, { status });
      expect(res.body.error.details.reason).toBe('invalid_transition');
    }
  });
});

describe('DELETE /reservations/:id', () => {
  it('cancels, frees the table, counts it, and answers unchanged the second time', async () => {
    const { api, venueId } = await setup({ tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const r = (await book(api, venueId, { guest: { phone: '3471234567' } })).body.reservation;
    const res = await api.delete(`/reservations/${r.id}`);
    expect(res.status).toBe(200);
    expect(res.body.reservation.status).toBe('cancelled');
    const [guest] = await db().select().from(guests).where(eq(guests.id, r.guestId));
    expect(guest.cancelledCount).toBe(1);
    const again = await api.delete(`/reservations/${r.id}`);
    expect(again.status).toBe(200);
    expect(again.body.reservation.updatedAt).toBe(res.body.reservation.updatedAt);
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created', 'reservation_cancelled']);
    expect((await book(api, venueId)).status).toBe(201);
  });

  it('refuses to cancel a seated reservation', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    await api.patch(`/reservations/${r.id}`, { status: 'seated' });
    const res = await api.delete(`/reservations/${r.id}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.reason).toBe('invalid_transition');
  });

  it('cannot cancel through PATCH', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const res = await api.patch(`/reservations/${r.id}`, { status: 'cancelled' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['status']);
  });
});

describe('PATCH /reservations/:id', () => {
  it('moves a reservation keeping its table when it is still free', async () => {
    const { api, venueId, fixture } = await setup();
    const r = (await book(api, venueId, { partySize: 3 })).body.reservation;
    expect(r.table.tableId).toBe(fixture.tableIds.T4);
    const moved = await api.patch(`/reservations/${r.id}`, { time: '20:00', partySize: 2, notes: 'later' });
    expect(moved.status).toBe(200);
    expect(moved.body.reservation).toMatchObject({ time: '20:00', partySize: 2, notes: 'later', table: { tableId: fixture.tableIds.T4 } });
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created', 'reservation_modified']);
  });

  it('chooses another table when its own is taken, and refuses when none is free', async () => {
    const { api, venueId, fixture } = await setup({
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 4 },
        { name: 'B', minSeats: 1, maxSeats: 4 },
      ],
    });
    const first = (await book(api, venueId, { time: '19:00' })).body.reservation;
    // End to end after the first (19:00–20:30): the engine packs it on the same table.
    const second = (await book(api, venueId, { time: '20:30' })).body.reservation;
    expect(first.table.tableId).toBe(fixture.tableIds.A);
    expect(second.table.tableId).toBe(fixture.tableIds.A);
    const moved = await api.patch(`/reservations/${second.id}`, { time: '19:30' });
    expect(moved.body.reservation.table.tableId).toBe(fixture.tableIds.B);
    const blocker = await book(api, venueId, { time: '21:00', tableId: fixture.tableIds.A });
    expect(blocker.body.reservation.table.tableId).toBe(fixture.tableIds.A);
    const refused = await api.patch(`/reservations/${first.id}`, { time: '20:15' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_table' } });
    const unchanged = await api.get(`/reservations/${first.id}`);
    expect(unchanged.body.reservation).toEqual(first);
  });

  it('changes the table explicitly, removes it, and clears needsAttention when a table is given', async () => {
    const { api, venueId, fixture } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const onT4 = await api.patch(`/reservations/${r.id}`, { tableId: fixture.tableIds.T4 });
    expect(onT4.body.reservation.table.tableId).toBe(fixture.tableIds.T4);
    const removed = await api.patch(`/reservations/${r.id}`, { tableId: null });
    expect(removed.body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true, table: null });
    const back = await api.patch(`/reservations/${r.id}`, { tableId: fixture.tableIds.T2 });
    expect(back.body.reservation).toMatchObject({ tableAssigned: true, needsAttention: false });
    expect(await eventTypesOf(r.id)).toEqual(['reservation_created', 'reservation_needs_attention']);
    const tooSmall = await api.patch(`/reservations/${r.id}`, { partySize: 3, tableId: fixture.tableIds.T2 });
    expect(tooSmall.status).toBe(409);
  });

  it('refuses a move into a full pacing block, keeping the reservation as it was', async () => {
    const { api, venueId } = await setup({ pacing: [{ maxCovers: 4, windowMinutes: 30 }] });
    expect((await book(api, venueId, { time: '19:00', partySize: 4 })).status).toBe(201);
    const later = (await book(api, venueId, { time: '20:00', partySize: 2 })).body.reservation;
    const moved = await api.patch(`/reservations/${later.id}`, { time: '19:15' });
    expect(moved.status).toBe(409);
    expect(moved.body.error.details).toMatchObject({ reason: 'pacing_full', alternatives: expect.any(Array) });
    expect((await api.patch(`/reservations/${later.id}`, { partySize: 4 })).status).toBe(200);
  });

  it('checks If-Match, quoted or bare, and the body version', async () => {
    const { api, venueId } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const stale = r.updatedAt;
    const ok = await api.patch(`/reservations/${r.id}`, { notes: 'one' }, { 'if-match': `"${stale}"` });
    expect(ok.status).toBe(200);
    const quoted = await api.patch(`/reservations/${r.id}`, { notes: 'two' }, { 'if-match': `"${stale}"` });
    expect(quoted.status).toBe(409);
    expect(quoted.body.error).toMatchObject({ code: 'conflict', details: { reason: 'version_mismatch' } });
    const bare = await api.patch(`/reservations/${r.id}`, { notes: 'two' }, { 'if-match': stale });
    expect(bare.body.error.details.reason).toBe('version_mismatch');
    const body = await api.patch(`/reservations/${r.id}`, { notes: 'two', version: stale });
    expect(body.body.error.details.reason).toBe('version_mismatch');
    const fresh = await api.patch(`/reservations/${r.id}`, { notes: 'two', version: ok.body.reservation.updatedAt });
    expect(fresh.status).toBe(200);
    const garbage = await api.patch(`/reservations/${r.id}`, { notes: 'three' }, { 'if-match': 'yesterday' });
    expect(garbage.status).toBe(400);
  });

  it('changes guest and externalRef and validates them', async () => {
    const { api, venueId } = await setup();
    const withGuest = (await book(api, venueId, { guest: { phone: '3471234567' } })).body.reservation;
    const r = (await book(api, venueId, { time: '20:00' })).body.reservation;
    const attached = await api.patch(`/reservations/${r.id}`, { guestId: withGuest.guestId, externalRef: 'crm-7' });
    expect(attached.body.reservation).toMatchObject({
      guestId: withGuest.guestId,
      externalRef: 'crm-7',
      guestDetails: { id: withGuest.guestId },
    });
    const detached = await api.patch(`/reservations/${r.id}`, { guestId: null, externalRef: null });
    expect(detached.body.reservation).toMatchObject({ guestId: null, guest: null, guestDetails: null, externalRef: null });
    expect((await api.patch(`/reservations/${r.id}`, { externalRef: '' })).body.error.details.fields).toEqual(['externalRef']);
    expect((await api.patch(`/reservations/${r.id}`, { partySize: 0 })).body.error.details.fields).toEqual(['partySize']);
    const foreign = await api.patch(`/reservations/${r.id}`, { guestId: '00000000-0000-4000-8000-000000000000' });
    expect(foreign.body.error.details.fields).toEqual(['guestId']);
  });
});

describe('scopes', () => {
  it('needs floor:write for floor statuses and tables, reservations:write for the rest', async () => {
    const { api, venueId, organisationId, fixture } = await setup();
    const r = (await book(api, venueId)).body.reservation;
    const writer = client(server.url, await createKey(organisationId, { scopes: ['reservations:read', 'reservations:write'] }));
    for (const body of [
      { status: 'arrived' },
      { status: 'seated' },
      { status: 'no_show' },
      { tableId: fixture.tableIds.T4 },
      { tableCombinationId: null },
    ]) {
      const res = await writer.patch(`/reservations/${r.id}`, body);
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'floor:write' } });
    }
    expect((await writer.patch(`/reservations/${r.id}`, { status: 'confirmed' })).status).toBe(200);
    for (const extra of [{ tableId: fixture.tableIds.T4 }, { force: true }, { source: 'walk_in' }]) {
      const res = await book(writer, venueId, { time: '21:00', ...extra });
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'floor:write' } });
    }
    const reader = client(server.url, await createKey(organisationId, { scopes: ['reservations:read'] }));
    expect((await book(reader, venueId)).body.error).toMatchObject({
      code: 'insufficient_scope',
      details: { requiredScope: 'reservations:write' },
    });
    expect((await reader.delete(`/reservations/${r.id}`)).status).toBe(403);
    expect((await reader.get(`/reservations/${r.id}`)).status).toBe(200);
  });
});

describe('publishable keys', () => {
  it('book without guest data in the answer and may not send restricted fields', async () => {
    const { venueId, organisationId, fixture } = await setup();
    const widgetKey = await createKey(organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    const widget = client(server.url, widgetKey);
    const origin = { origin: 'https://shop.example' };
    const res = await widget.post(
      '/reservations',
      { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, guest: { phone: '3471234567', firstName: 'Web' } },
      origin,
    );
    expect(res.status).toBe(201);
    expect(res.body.reservation).toMatchObject({ guest: null, guestId: null, source: 'api', sourceDetail: 'extra key', status: 'created' });
    expect(res.body.reservation).not.toHaveProperty('guestDetails');
    const stored = await db().select().from(guests).where(eq(guests.venueId, venueId));
    expect(stored).toHaveLength(1);

    for (const extra of [
      { externalRef: 'x' },
      { serviceTags: ['vip'] },
      { guestId: stored[0].id },
      { tableId: fixture.tableIds.T4 },
      { tableCombinationId: fixture.tableIds.T4 },
      { status: 'confirmed' },
      { source: 'phone' },
      { force: true },
    ]) {
      const refused = await widget.post('/reservations', { venueId, serviceDate: tomorrow, time: '20:00', partySize: 2, ...extra }, origin);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toMatchObject({ code: 'forbidden', details: { reason: 'publishable_key' } });
    }
    for (const [method, path] of [
      ['GET', '/reservations'],
      ['GET', `/reservations/${res.body.reservation.id}`],
      ['PATCH', `/reservations/${res.body.reservation.id}`],
      ['DELETE', `/reservations/${res.body.reservation.id}`],
    ]) {
      const other = await widget.request(method, path, { headers: origin, body: method === 'PATCH' ? { notes: 'x' } : undefined });
      expect(other.status).toBe(403);
      expect(other.body.error.details.reason).toBe('publishable_key');
    }
  });
});

describe('isolation and lists', () => {
  it('hides reservations of other organisations and of venues outside a limited key', async () => {
    const a = await setup();
    const b = await setup();
    const r = (await book(a.api, a.venueId)).body.reservation;
    expect((await b.api.get(`/reservations/${r.id}`)).status).toBe(404);
    expect((await b.api.patch(`/reservations/${r.id}`, { notes: 'x' })).status).toBe(404);
    expect((await b.api.delete(`/reservations/${r.id}`)).status).toBe(404);
    expect((await b.api.get('/reservations')).body.data).toEqual([]);
    expect((await book(b.api, a.venueId)).status).toBe(404);

    const secondVenue = await a.api.post('/venues', { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' });
    const limited = client(server.url, await createKey(a.organisationId, { venueIds: [secondVenue.body.venue.id] }));
    expect((await limited.get(`/reservations/${r.id}`)).status).toBe(404);
    expect((await limited.get('/reservations')).body.data).toEqual([]);
    expect((await limited.get(`/reservations?venueId=${a.venueId}`)).status).toBe(404);
    expect((await a.api.get('/reservations/not-a-uuid')).status).toBe(404);
  });

  it('lists by startsAt with filters and pages', async () => {
    const { api, venueId } = await setup();
    const late = (await book(api, venueId, { time: '21:00', externalRef: 'late' })).body.reservation;
    const early = (await book(api, venueId, { time: '18:00', guest: { phone: '3471234567' } })).body.reservation;
    const other = (await api.post('/reservations', { venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 })).body.reservation;
    await api.patch(`/reservations/${late.id}`, { status: 'confirmed' });
    const ids = async (query: string) => (await api.get(`/reservations${query}`)).body.data.map((r: { id: string }) => r.id);
    expect(await ids('')).toEqual([early.id, late.id, other.id]);
    expect(await ids(`?venueId=${venueId}&from=${tomorrow}&to=${tomorrow}`)).toEqual([early.id, late.id]);
    expect(await ids('?status=confirmed')).toEqual([late.id]);
    expect(await ids('?status=created,confirmed')).toEqual([early.id, late.id, other.id]);
    expect(await ids(`?guestId=${early.guestId}`)).toEqual([early.id]);
    expect(await ids('?externalRef=late')).toEqual([late.id]);
    const first = await api.get('/reservations?limit=2');
    expect(first.body.data).toHaveLength(2);
    const second = await api.get(`/reservations?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((r: { id: string }) => r.id)).toEqual([other.id]);
    expect(second.body.nextCursor).toBeNull();
    const list = (await api.get('/reservations')).body.data[0];
    expect(list).toHaveProperty('guestDetails');
    expect(list).toHaveProperty('table');
    expect((await api.get('/reservations?status=bogus')).body.error.details.fields).toEqual(['status']);
  });

  // The list bounds startsAt by the dates as well (so that the window is read by index): a service
  // date's first and past-midnight minutes, in the zones furthest from UTC, stay inside it.
  it('lists a service date whole by from/to, first minute and past midnight, in UTC+14 and UTC-11', async () => {
    const t = await createTenant({ venue: { timezone: 'Pacific/Kiritimati', countryCode: 'KI' } });
    const api = client(server.url, t.key);
    const west = (await api.post('/venues', { name: 'West', timezone: 'Pacific/Pago_Pago', countryCode: 'AS' })).body.venue.id as string;
    // 00:00 is the date's first minute (Early); 01:30 only Late offers, the night after the date.
    const night: VenueFixtureOptions = {
      shifts: [
        { name: 'Early', startTime: '00:00', lastSeatingTime: '01:00', endTime: '03:00' },
        { name: 'Late', startTime: '22:00', lastSeatingTime: '01:30', endTime: '03:30' },
      ],
    };
    await configureVenue(t.venueId, night);
    await configureVenue(west, night);
    const ids: string[] = [];
    for (const [venueId, zone] of [
      [t.venueId, 'Pacific/Kiritimati'],
      [west, 'Pacific/Pago_Pago'],
    ]) {
      const serviceDate = localDate(3, zone);
      const starts: number[] = [];
      for (const time of ['00:00', '01:30']) {
        const created = await api.post('/reservations', { venueId, serviceDate, time, partySize: 2 });
        expect(created.status, `${zone} ${time}`).toBe(201);
        ids.push(created.body.reservation.id);
        starts.push(Date.parse(created.body.reservation.startsAt));
      }
      expect(starts[1] - starts[0], 'the 01:30 party sits the night after the date').toBe(25.5 * 3600_000);
    }
    const listed = async (from: string, to: string) =>
      (await api.get(`/reservations?from=${from}&to=${to}&limit=50`)).body.data.map((r: { id: string }) => r.id);
    const east = localDate(3, 'Pacific/Kiritimati');
    const westDate = localDate(3, 'Pacific/Pago_Pago');
    expect(await listed(east, east)).toEqual(expect.arrayContaining(ids.slice(0, 2)));
    expect(await listed(westDate, westDate)).toEqual(expect.arrayContaining(ids.slice(2)));
    expect((await listed(east < westDate ? east : westDate, east < westDate ? westDate : east)).sort()).toEqual([...ids].sort());
  });
});
