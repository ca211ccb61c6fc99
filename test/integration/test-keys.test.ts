import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Job } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, reservations, webhookDeliveries } from '../../src/db/schema/index.js';
import { notifyLateReservations } from '../../src/services/timers/late-reservations.js';
import { processEventJob } from '../../src/services/events/process-event.js';
import { client, createKey, createTenant, startTestServer, type TestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server.close());

async function deliveriesAfterProcessing(reservationId: string) {
  const rows = await db.select().from(events).where(eq(events.subjectId, reservationId));
  // The real worker-events processor, called with the job it would receive.
  for (const event of rows) await processEventJob({ data: { eventId: event.id } } as Job);
  const deliveries = await Promise.all(rows.map((e) => db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, e.id))));
  return { events: rows, deliveries: deliveries.flat() };
}

describe('test keys of a live organisation', () => {
  it('see the live venues in test mode, and what they do sends no webhook', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const testKey = await createKey(t.organisationId, { kind: 'test' });
    expect(testKey).toMatch(/^gsk_test_/);
    const live = client(server.url, t.key);
    const test = client(server.url, testKey);
    await live.post('/webhook-endpoints', { venueId: t.venueId, url: 'https://partner.example/hooks' });
    await live.post('/automations', { venueId: t.venueId, name: 'All bookings', eventTypes: ['reservation_created'], action: { type: 'partner_notification' } });

    const venue = await test.get(`/venues/${t.venueId}`);
    expect(venue.status).toBe(200);
    expect(venue.body.livemode).toBe(false);

    const body = { venueId: t.venueId, serviceDate: localDate(1), time: '19:00', partySize: 2 };
    const byTest = await test.post('/reservations', body);
    expect(byTest.status).toBe(201);
    expect(byTest.body.livemode).toBe(false);
    const quiet = await deliveriesAfterProcessing(byTest.body.reservation.id);
    expect(quiet.events.map((e) => [e.type, e.livemode])).toEqual([['reservation_created', false]]);
    expect(quiet.deliveries).toEqual([]);

    const byLive = await live.post('/reservations', { ...body, time: '20:00' });
    expect(byLive.body.livemode).toBe(true);
    const sent = await deliveriesAfterProcessing(byLive.body.reservation.id);
    expect(sent.deliveries).toHaveLength(1);

    // Timers speak in the mode of the key that made the booking.
    const ids = [byTest.body.reservation.id, byLive.body.reservation.id];
    await db
      .update(reservations)
      .set({ startsAt: sql`clock_timestamp() - interval '16 minutes'`, endsAt: sql`clock_timestamp() + interval '60 minutes'` })
      .where(inArray(reservations.id, ids));
    await notifyLateReservations();
    const late = await db.select().from(events).where(and(inArray(events.subjectId, ids), eq(events.type, 'reservation_late')));
    expect(Object.fromEntries(late.map((e) => [e.subjectId, e.livemode]))).toEqual({ [ids[0]]: false, [ids[1]]: true });
  });
});
