import { and, eq, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, reservations } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { runImport } from '../../src/services/imports/process-import-job.js';
import { markNoShows, notifyLateReservations } from '../../src/services/timers/late-reservations.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();
afterAll(async () => closeQueues());

const day = localDate(2);
const tableOf = (id: string, name: string, minSeats: number, maxSeats: number) => ({
  tableId: id,
  tableCombinationId: null,
  tables: [{ id, name, minSeats, maxSeats }],
});

describe('GET /reservations/{id}/history (docs/reservations.md "Reservation history")', () => {
  it('lists create → confirm → move → table change → cancel with exact changes and the key as actor', async () => {
    const t = await createTenant();
    const floor = await configureVenue(t.venueId);
    const desk = client(server.url, await createKey(t.organisationId, { name: 'Front desk' }));
    const created = await desk.post('/reservations', {
      venueId: t.venueId,
      serviceDate: day,
      time: '19:00',
      partySize: 2,
      guest: { phone: '347 111 2233', firstName: 'Ada' },
    });
    expect(created.status).toBe(201);
    const { id, guestId } = created.body.reservation;
    const t2 = tableOf(floor.tableIds.T2, 'T2', 1, 2);
    const t4 = tableOf(floor.tableIds.T4, 'T4', 2, 4);
    expect(created.body.reservation.table).toEqual(t2);

    expect((await desk.patch(`/reservations/${id}`, { status: 'confirmed' })).status).toBe(200);
    expect((await desk.patch(`/reservations/${id}`, { time: '20:30' })).status).toBe(200);
    expect((await desk.patch(`/reservations/${id}`, { tableId: floor.tableIds.T4 })).status).toBe(200);
    expect((await desk.delete(`/reservations/${id}`)).status).toBe(200);

    const res = await desk.get(`/reservations/${id}/history`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    const actor = { kind: 'api_key', name: 'Front desk' };
    expect(res.body.data.map(({ eventId: _id, createdAt: _at, ...rest }: any) => rest)).toEqual([
      {
        type: 'reservation_created',
        actor,
        changes: {
          status: { from: null, to: 'created' },
          serviceDate: { from: null, to: day },
          time: { from: null, to: '19:00' },
          partySize: { from: null, to: 2 },
          table: { from: null, to: t2 },
          guestId: { from: null, to: guestId },
          needsAttention: { from: null, to: false },
          tableAssigned: { from: null, to: true },
        },
      },
      { type: 'reservation_confirmed', actor, changes: { status: { from: 'created', to: 'confirmed' } } },
      { type: 'reservation_modified', actor, changes: { time: { from: '19:00', to: '20:30' } } },
      // The catalogue has no event for a table change: a history-only entry.
      { type: 'reservation_updated', actor, changes: { table: { from: t2, to: t4 } } },
      { type: 'reservation_cancelled', actor, changes: { status: { from: 'confirmed', to: 'cancelled' } } },
    ]);
    // The other entries are the reservation's events: the same ids as GET /events, oldest first.
    const listed = (await desk.get(`/events?venueId=${t.venueId}`)).body.data.filter((e: any) => e.data.reservation?.id === id);
    expect(res.body.data.filter((e: any) => e.type !== 'reservation_updated').map((e: any) => e.eventId)).toEqual(
      listed.map((e: any) => e.id),
    );

    // Pages of 2 give the same entries, each compared with the entry before it, even across pages.
    const paged: unknown[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await desk.get(`/reservations/${id}/history?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      paged.push(...page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(res.body.data);
  });

  it('names a publishable key as widget, the timers as system, and events recorded before actors as unrecorded', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const widget = client(
      server.url,
      await createKey(t.organisationId, { kind: 'publishable', name: 'Website', allowedOrigins: ['https://shop.example'] }),
    );
    const booked = await widget.post(
      '/reservations',
      { venueId: t.venueId, serviceDate: day, time: '19:00', partySize: 2 },
      { origin: 'https://shop.example' },
    );
    expect(booked.status).toBe(201);
    const id = booked.body.reservation.id;
    // Started 46 minutes ago: late, then no-show, by worker-timers.
    await db()
      .update(reservations)
      .set({ startsAt: sql`clock_timestamp() - interval '46 minutes'`, endsAt: sql`clock_timestamp() + interval '1 hour'` })
      .where(eq(reservations.id, id));
    await notifyLateReservations();
    await markNoShows();

    const api = client(server.url, t.key);
    const history = (await api.get(`/reservations/${id}/history`)).body.data;
    expect(history.map((e: any) => [e.type, e.actor])).toEqual([
      ['reservation_created', { kind: 'widget', name: 'Website' }],
      ['reservation_late', { kind: 'system', name: 'worker-timers' }],
      ['reservation_no_show', { kind: 'system', name: 'worker-timers' }],
    ]);
    expect(history[1].changes).toEqual({});
    expect(history[2].changes).toMatchObject({ status: { from: 'created', to: 'no_show' } });

    await db().update(events).set({ actor: null }).where(eq(events.id, history[0].eventId));
    expect((await api.get(`/reservations/${id}/history`)).body.data[0].actor).toEqual({ kind: 'system', name: 'unrecorded' });
  });

  it('shows what imports did (history-only rows), with the import as actor, without listing them in GET /events', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, await createKey(t.organisationId, { name: 'Migration' }));
    const booked = await api.post('/reservations', {
      venueId: t.venueId,
      serviceDate: day,
      time: '19:00',
      partySize: 2,
      externalRef: 'pos-1',
    });
    const id = booked.body.reservation.id;
    const submitted = await api.post('/imports/reservations', {
      rows: [
        { venueId: t.venueId, serviceDate: day, time: '19:00', partySize: 4, externalRef: 'pos-1', notes: 'from the old system' },
        { venueId: t.venueId, serviceDate: day, time: '20:00', partySize: 2, externalRef: 'pos-2' },
      ],
    });
    await runImport(submitted.body.import.id);

    const history = (await api.get(`/reservations/${id}/history`)).body.data;
    expect(history.map((e: any) => [e.type, e.actor])).toEqual([
      ['reservation_created', { kind: 'api_key', name: 'Migration' }],
      ['reservation_modified', { kind: 'import', name: 'Migration' }],
    ]);
    expect(history[1].changes).toMatchObject({ partySize: { from: 2, to: 4 }, notes: { from: null, to: 'from the old system' } });

    const [imported] = await db()
      .select()
      .from(reservations)
      .where(and(eq(reservations.venueId, t.venueId), eq(reservations.externalRef, 'pos-2')));
    const importedHistory = (await api.get(`/reservations/${imported.id}/history`)).body.data;
    expect(importedHistory).toHaveLength(1);
    expect(importedHistory[0]).toMatchObject({
      type: 'reservation_created',
      actor: { kind: 'import', name: 'Migration' },
      changes: { externalRef: { from: null, to: 'pos-2' } },
    });

    const listed = (await api.get(`/events?venueId=${t.venueId}`)).body.data.map((e: any) => e.id);
    expect(listed).toEqual([history[0].eventId]);
  });

  it('is 404 for reservations of other organisations and needs reservations:read', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const id = (await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: '19:00', partySize: 2 })).body.reservation.id;
    const stranger = await createTenant();
    expect((await client(server.url, stranger.key).get(`/reservations/${id}/history`)).status).toBe(404);
    const noRead = client(server.url, await createKey(t.organisationId, { scopes: ['events:read'] }));
    expect((await noRead.get(`/reservations/${id}/history`)).status).toBe(403);
    expect((await api.get(`/reservations/${id}/history?limit=0`)).status).toBe(400);
  });
});
