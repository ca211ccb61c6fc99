import { and, asc, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { events, guests, waitlistOffers } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { createEventJobHandler } from '../../src/roles/event-handler.js';
import { eventJob, type EventJob } from '../../src/jobs/event-job.js';
import { startJobWorker, type RunningWorker } from '../../src/queues/start-worker.js';
import { processEventInBatch } from '../../src/services/event-processing/process-event.js';
import { eventually } from '../support/eventually.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { processConfig } from '../../src/config.js';

// Its own queues, so that this file's worker-events handles exactly the events it waits for.
useOwnQueuePrefix('wl');

const server = useTestServer();
let eventsWorker: RunningWorker<EventJob>;
beforeAll(async () => {
  eventsWorker = startJobWorker(eventJob, createEventJobHandler(processConfig()), { concurrency: 5 });
});
afterAll(async () => {
  await eventsWorker.close();
  await closeQueues();
});

const today = localDate(0);
const tomorrow = localDate(1);

async function setup() {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId);
  return { ...t, fixture, api: client(server.url, t.key) };
}

async function eventsOf(subjectId: string) {
  return db().select().from(events).where(eq(events.subjectId, subjectId)).orderBy(asc(events.createdAt));
}

/** Waits until worker-events has handled every event of the venue. */
async function eventsDispatched(venueId: string) {
  await eventually(
    async () => {
      const pending = await db()
        .select({ id: events.id })
        .from(events)
        .where(and(eq(events.venueId, venueId), isNull(events.dispatchedAt)));
      return pending.length === 0;
    },
    20_000,
    'events dispatched',
  );
}

async function offersOf(venueId: string) {
  await eventsDispatched(venueId);
  const rows = await db()
    .select()
    .from(events)
    .where(and(eq(events.venueId, venueId), eq(events.type, 'compatible_table_freed')))
    .orderBy(asc(events.createdAt));
  return rows.map((e) => e.subjectId);
}

function join(api: Client, venueId: string, extra: Record<string, unknown> = {}) {
  return api.post('/waitlist', { venueId, partySize: 2, name: 'Ada Lovelace', phone: '347 123 4567', ...extra });
}

describe('waiting list', () => {
  it('adds parties in queue order, with their guest found or created by phone, and emits waitlist_entry_created', async () => {
    const { api, venueId } = await setup();
    const first = await join(api, venueId, { notes: 'by the window', quotedWaitMinutes: 20 });
    expect(first.status).toBe(201);
    expect(first.body.livemode).toBe(true);
    const entry = first.body.entry;
    expect(entry).toEqual({
      id: expect.any(String),
      venueId,
      serviceDate: today,
      partySize: 2,
      guestId: expect.any(String),
      name: 'Ada Lovelace',
      phone: '+393471234567',
      notes: 'by the window',
      status: 'waiting',
      position: 1,
      quotedWaitMinutes: 20,
      // Estimated by worker-events once the entry's event is processed.
      estimatedSeatTime: null,
      estimatedWaitMinutes: null,
      notifiedAt: null,
      reservationId: null,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const [guest] = await db().select().from(guests).where(eq(guests.id, entry.guestId));
    expect(guest).toMatchObject({ phone: '+393471234567', firstName: 'Ada', lastName: 'Lovelace' });
    const created = await eventsOf(entry.id);
    expect(created.map((e) => [e.type, e.subjectType])).toEqual([['waitlist_entry_created', 'waitlist_entry']]);
    expect(created[0].data).toEqual({ waitlistEntry: entry });

    // The same phone finds the same guest; a party without a phone joins by name.
    const second = (await join(api, venueId, { phone: '+39 347 1234567', partySize: 4 })).body.entry;
    expect(second).toMatchObject({ position: 2, guestId: entry.guestId });
    const third = (await api.post('/waitlist', { venueId, partySize: 3, name: 'Walk-by' })).body.entry;
    expect(third).toMatchObject({ position: 3, guestId: null, phone: null, name: 'Walk-by' });
    const otherDay = (await join(api, venueId, { serviceDate: tomorrow })).body.entry;
    expect(otherDay.position).toBe(1);

    const list = await api.get(`/waitlist?venueId=${venueId}&serviceDate=${today}`);
    expect(list.body.data.map((e: any) => e.position)).toEqual([1, 2, 3]);
    const page = await api.get(`/waitlist?venueId=${venueId}&serviceDate=${today}&limit=2`);
    expect(page.body.data.map((e: any) => e.id)).toEqual([entry.id, second.id]);
    const rest = await api.get(`/waitlist?venueId=${venueId}&serviceDate=${today}&limit=2&cursor=${page.body.nextCursor}`);
    expect(rest.body).toMatchObject({ data: [{ id: third.id }], nextCursor: null });
    expect((await api.get(`/waitlist?venueId=${venueId}`)).body.data.map((e: any) => e.id)).toEqual([
      entry.id,
      second.id,
      third.id,
      otherDay.id,
    ]);
  });

  it('changes, notifies, cancels (once), and answers 400 for a finished entry', async () => {
    const { api, venueId } = await setup();
    const entry = (await join(api, venueId)).body.entry;
    const patched = await api.patch(`/waitlist/${entry.id}`, { partySize: 3, notes: 'high chair', quotedWaitMinutes: 15 });
    expect(patched.status).toBe(200);
    expect(patched.body.entry).toMatchObject({ partySize: 3, notes: 'high chair', quotedWaitMinutes: 15, status: 'waiting' });
    expect(patched.body.entry.updatedAt > entry.updatedAt).toBe(true);

    const notified = await api.post(`/waitlist/${entry.id}/notify`);
    expect(notified.status).toBe(200);
    expect(notified.body.entry).toMatchObject({ status: 'notified', notifiedAt: expect.any(String) });
    const read = await api.get(`/waitlist/${entry.id}`);
    // worker-events may have estimated the entry in between (its estimate leaves updatedAt alone).
    const { estimatedSeatTime: _s, estimatedWaitMinutes: _w, ...readRest } = read.body.entry;
    const { estimatedSeatTime: _ns, estimatedWaitMinutes: _nw, ...notifiedRest } = notified.body.entry;
    expect(readRest).toEqual(notifiedRest);
    expect(read.headers.get('etag')).toBe(`"${read.body.entry.updatedAt}"`);
    expect((await api.get(`/waitlist?venueId=${venueId}&status=notified`)).body.data.map((e: any) => e.id)).toEqual([entry.id]);
    expect((await api.get(`/waitlist?venueId=${venueId}&status=waiting`)).body.data).toEqual([]);

    const cancelled = await api.delete(`/waitlist/${entry.id}`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.entry.status).toBe('cancelled');
    const again = await api.delete(`/waitlist/${entry.id}`);
    expect(again.status).toBe(200);
    expect(again.body.entry).toEqual(cancelled.body.entry);
    const types = (await eventsOf(entry.id)).map((e) => e.type);
    expect(types).toEqual(['waitlist_entry_created', 'waitlist_entry_cancelled']);
    const [cancelEvent] = (await eventsOf(entry.id)).filter((e) => e.type === 'waitlist_entry_cancelled');
    expect(cancelEvent.data).toEqual({ waitlistEntry: cancelled.body.entry });

    for (const res of [
      await api.patch(`/waitlist/${entry.id}`, { partySize: 2 }),
      await api.post(`/waitlist/${entry.id}/notify`),
      await api.post(`/waitlist/${entry.id}/convert`, { time: '19:00' }),
    ]) {
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_request', details: { reason: 'invalid_transition' } });
    }
  });

  it('converts an entry into a reservation with source waitlist through the engine', async () => {
    const { api, venueId, fixture } = await setup();
    const entry = (await join(api, venueId, { serviceDate: tomorrow, partySize: 4, notes: 'birthday' })).body.entry;
    const res = await api.post(`/waitlist/${entry.id}/convert`, { time: '19:30' });
    expect(res.status).toBe(200);
    const { reservation } = res.body;
    expect(reservation).toMatchObject({
      venueId,
      serviceDate: tomorrow,
      time: '19:30',
      partySize: 4,
      status: 'created',
      source: 'waitlist',
      notes: 'birthday',
      guestId: entry.guestId,
      tableAssigned: true,
      table: { tableId: fixture.tableIds.T4 },
    });
    expect(res.body.entry).toMatchObject({ id: entry.id, status: 'converted', reservationId: reservation.id });
    expect((await eventsOf(reservation.id)).map((e) => e.type)).toEqual(['reservation_created']);

    // A party the engine cannot seat: 409 as for POST /reservations, and the entry stays in the queue.
    const big = (await join(api, venueId, { serviceDate: tomorrow, partySize: 40, phone: '347 000 0001' })).body.entry;
    const refused = await api.post(`/waitlist/${big.id}/convert`, { time: '19:30' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_turn_time_rule', alternatives: [] } });
    expect((await api.get(`/waitlist/${big.id}`)).body.entry.status).toBe('waiting');

    // An entry of another day needs a time; a table needs floor:write.
    const later = (await join(api, venueId, { serviceDate: tomorrow, phone: '347 000 0002' })).body.entry;
    const noTime = await api.post(`/waitlist/${later.id}/convert`, {});
    expect(noTime.status).toBe(400);
    expect(noTime.body.error.details.fields).toEqual(['time']);
    const writer = client(
      server.url,
      await createKey((await db().select().from(guests).where(eq(guests.id, entry.guestId)))[0].organisationId, {
        scopes: ['reservations:write', 'reservations:read'],
      }),
    );
    const denied = await writer.post(`/waitlist/${later.id}/convert`, { time: '20:00', tableId: fixture.tableIds.T2 });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.requiredScope).toBe('floor:write');
    const onTable = await api.post(`/waitlist/${later.id}/convert`, { time: '20:00', tableId: fixture.tableIds.T6 });
    expect(onTable.status).toBe(409);
    const onT2 = await api.post(`/waitlist/${later.id}/convert`, { time: '20:00', tableId: fixture.tableIds.T2 });
    expect(onT2.body.reservation.table.tableId).toBe(fixture.tableIds.T2);
  });

  it('needs the reservation scopes, hides guest data without guests:read, and keeps entries to their venues', async () => {
    const { api, venueId, organisationId } = await setup();
    const entry = (await join(api, venueId)).body.entry;
    const reader = client(server.url, await createKey(organisationId, { scopes: ['reservations:read'] }));
    const denied = await join(reader, venueId);
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'reservations:write' } });
    const read = await reader.get(`/waitlist/${entry.id}`);
    expect(read.body.entry).toMatchObject({ id: entry.id, name: null, phone: null, guestId: entry.guestId });
    const other = await createTenant();
    expect((await client(server.url, other.key).get(`/waitlist/${entry.id}`)).status).toBe(404);
    expect((await client(server.url, other.key).get(`/waitlist?venueId=${venueId}`)).status).toBe(404);
    expect((await api.get('/waitlist/not-a-uuid')).status).toBe(404);

    for (const body of [
      { venueId, partySize: 0, name: 'x' },
      { venueId, partySize: 2 },
      { venueId, partySize: 2, name: 'x', phone: '12' },
      { venueId, partySize: 2, name: 'x', serviceDate: localDate(-1) },
      { venueId, partySize: 2, name: 'x', extra: 1 },
    ]) {
      const res = await api.post('/waitlist', body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
    }
    expect((await api.get(`/waitlist?venueId=${venueId}&status=sleeping`)).status).toBe(400);
  });
});

describe('compatible_table_freed', () => {
  it('offers a freed table to the first waiting party that fits it, once', async () => {
    const { api, venueId, fixture } = await setup();
    const booked = (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 4 })).body.reservation;
    expect(booked.table.tableId).toBe(fixture.tableIds.T4);
    const tooBig = (await join(api, venueId, { serviceDate: tomorrow, partySize: 6, phone: '347 000 0011' })).body.entry;
    const notified = (await join(api, venueId, { serviceDate: tomorrow, partySize: 3, phone: '347 000 0012' })).body.entry;
    await api.post(`/waitlist/${notified.id}/notify`);
    const fits = (await join(api, venueId, { serviceDate: tomorrow, partySize: 3, phone: '347 000 0013' })).body.entry;
    const alsoFits = (await join(api, venueId, { serviceDate: tomorrow, partySize: 2, phone: '347 000 0014' })).body.entry;

    expect((await api.delete(`/reservations/${booked.id}`)).status).toBe(200);
    // T4 frees at 19:00: the party of 6 does not fit it, the notified one was already called: the next waiting party of 3 gets it.
    expect(await offersOf(venueId)).toEqual([fits.id]);
    const [offer] = await db()
      .select()
      .from(events)
      .where(and(eq(events.subjectId, fits.id), eq(events.type, 'compatible_table_freed')));
    expect(offer.data).toEqual({ waitlistEntry: expect.objectContaining({ id: fits.id, partySize: 3, status: 'waiting' }) });
    expect(offer.subjectType).toBe('waitlist_entry');

    // worker-events handling the same event again (a crash before its mark) offers nothing more.
    const [cancelled] = await db()
      .select()
      .from(events)
      .where(and(eq(events.subjectId, booked.id), eq(events.type, 'reservation_cancelled')));
    await db().update(events).set({ dispatchedAt: null }).where(eq(events.id, cancelled.id));
    await processEventInBatch({ eventId: cancelled.id }, processConfig());
    expect(await offersOf(venueId)).toEqual([fits.id]);
    expect(await db().select().from(waitlistOffers).where(eq(waitlistOffers.freedByEventId, cancelled.id))).toEqual([
      expect.objectContaining({ waitlistEntryId: fits.id, tableIds: [fixture.tableIds.T4] }),
    ]);
    expect([tooBig.id, alsoFits.id]).not.toContain(offer.subjectId);
  });

  it("offers nothing when the freed table is taken again within the party's turn time, and offers an unblocked table to today's queue", async () => {
    const { api, venueId, fixture } = await setup();
    const early = (
      await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '18:00', partySize: 4, tableId: fixture.tableIds.T6 })
    ).body.reservation;
    expect(early.table.tableId).toBe(fixture.tableIds.T6);
    // T6 is booked again from 19:30: a party of 5 from 18:00 would need it for 120 minutes.
    expect(
      (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:30', partySize: 5 })).body.reservation.table.tableId,
    ).toBe(fixture.tableIds.T6);
    await join(api, venueId, { serviceDate: tomorrow, partySize: 5 });
    await api.delete(`/reservations/${early.id}`);
    expect(await offersOf(venueId)).toEqual([]);

    await api.patch(`/venues/${venueId}/tables/${fixture.tableIds.T6}`, { isBlocked: true });
    const waiting = (await join(api, venueId, { partySize: 5, phone: '347 000 0021' })).body.entry;
    await api.patch(`/venues/${venueId}/tables/${fixture.tableIds.T6}`, { isBlocked: false });
    expect(await offersOf(venueId)).toEqual([waiting.id]);
  });
});
