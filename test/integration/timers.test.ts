import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import {
  automationRuns,
  automations,
  events,
  guests,
  reservations,
  waitlistEntries,
  webhookDeliveries,
} from '../../src/db/schema/index.js';
import { getQueue } from '../../src/queues/queues.js';
import { startJobWorker } from '../../src/queues/start-worker.js';
import { createTimerJobHandler } from '../../src/roles/timer-handler.js';
import { timerJob } from '../../src/jobs/timer-job.js';
import { markNoShows, notifyLateReservations } from '../../src/services/timers/late-reservations.js';
import { eventually } from '../support/eventually.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { processConfig } from '../../src/config.js';

const server = useTestServer();

/** The published events (history-only rows aside), oldest first. */
async function eventTypesOf(subjectId: string): Promise<string[]> {
  const rows = await db()
    .select({ type: events.type })
    .from(events)
    .where(and(eq(events.subjectId, subjectId), eq(events.published, true)))
    .orderBy(asc(events.createdAt));
  return rows.map((r) => r.type);
}

/** A booked reservation (through the API) moved so that it started `minutesAgo` minutes ago. */
async function reservationStartedAgo(minutesAgo: number, venue: { noShowToleranceMinutes?: number | null } = {}) {
  const t = await createTenant({ venue });
  await configureVenue(t.venueId);
  const api = client(server.url, t.key);
  const res = await api.post('/reservations', {
    venueId: t.venueId,
    serviceDate: localDate(1),
    time: '19:00',
    partySize: 2,
    guest: { phone: '347 765 4321', firstName: 'Ada' },
  });
  expect(res.status).toBe(201);
  const id: string = res.body.reservation.id;
  await db()
    .update(reservations)
    .set({ startsAt: sql`clock_timestamp() - make_interval(mins => ${minutesAgo})`, endsAt: sql`clock_timestamp() + interval '1 hour'` })
    .where(eq(reservations.id, id));
  return { ...t, api, id, guestId: res.body.reservation.guestId as string };
}

async function runTimerJobsConcurrently(task: 'late-no-show' | 'daily-purge', count: number): Promise<void> {
  const queue = getQueue(timerJob.queueName);
  // Two workers of the timers queue, as two worker-timers processes would run them.
  const workers = [
    startJobWorker(timerJob, createTimerJobHandler(processConfig()), { concurrency: 1 }),
    startJobWorker(timerJob, createTimerJobHandler(processConfig()), { concurrency: 1 }),
  ];
  try {
    const jobs = await queue.addBulk(Array.from({ length: count }, () => ({ name: task, data: { task } })));
    await eventually(
      async () => {
        const states = await Promise.all(jobs.map((j) => queue.getJob(j.id!).then((job) => job?.getState())));
        if (states.some((s) => s === 'failed')) throw new Error(`a ${task} job failed`);
        return states.every((s) => s === 'completed');
      },
      20_000,
      `${task} jobs finished`,
    );
  } finally {
    await Promise.all(workers.map((w) => w.close()));
  }
}

describe('late and no-show detection', () => {
  it('emits reservation_late exactly once for a reservation 16 minutes late, even with two runs at once', async () => {
    const { id } = await reservationStartedAgo(16);
    const onTime = await reservationStartedAgo(10);
    await Promise.all([notifyLateReservations(), notifyLateReservations()]);
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'reservation_late']);
    expect(await eventTypesOf(onTime.id)).toEqual(['reservation_created']);

    const [row] = await db().select().from(reservations).where(eq(reservations.id, id));
    expect(row.status).toBe('created');
    expect(row.lateNotifiedAt).not.toBeNull();
    const [late] = await db()
      .select()
      .from(events)
      .where(and(eq(events.subjectId, id), eq(events.type, 'reservation_late')));
    expect(late.data).toMatchObject({ reservation: { id, status: 'created', guest: { name: 'Ada' } } });

    // Later runs change nothing.
    await notifyLateReservations();
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'reservation_late']);
  });

  it('emits reservation_late once through two BullMQ workers of the timers queue running the task together', async () => {
    const { id } = await reservationStartedAgo(16);
    await runTimerJobsConcurrently('late-no-show', 4);
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'reservation_late']);
  });

  it('marks no_show after the tolerance through the same path as a PATCH: event and guest counter', async () => {
    const { id, guestId, api } = await reservationStartedAgo(46);
    await runTimerJobsConcurrently('late-no-show', 2);
    const read = await api.get(`/reservations/${id}`);
    expect(read.body.reservation).toMatchObject({ status: 'no_show' });
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'reservation_late', 'reservation_no_show']);
    const [guest] = await db().select().from(guests).where(eq(guests.id, guestId));
    expect(guest.noShowCount).toBe(1);
    const [noShow] = await db()
      .select()
      .from(events)
      .where(and(eq(events.subjectId, id), eq(events.type, 'reservation_no_show')));
    expect(noShow.data).toMatchObject({ reservation: { id, status: 'no_show', guestDetails: { noShowCount: 1 } } });

    // The late guest arrives after all: the usual move back, and the timer leaves it alone.
    expect((await api.patch(`/reservations/${id}`, { status: 'arrived' })).body.reservation.status).toBe('arrived');
    await markNoShows();
    expect((await api.get(`/reservations/${id}`)).body.reservation.status).toBe('arrived');
  });

  it('never marks no_show when the venue disables it (noShowToleranceMinutes null), but still announces late', async () => {
    const { id } = await reservationStartedAgo(120, { noShowToleranceMinutes: null });
    await Promise.all([notifyLateReservations(), markNoShows()]);
    await markNoShows();
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'reservation_late']);
    const [row] = await db().select().from(reservations).where(eq(reservations.id, id));
    expect(row.status).toBe('created');
  });

  it('leaves a reservation alone when it was changed between the read and the move', async () => {
    const { id, api } = await reservationStartedAgo(50);
    // Seated before the timer acts: not expected any more.
    expect((await api.patch(`/reservations/${id}`, { status: 'seated' })).status).toBe(200);
    await markNoShows();
    expect((await api.get(`/reservations/${id}`)).body.reservation.status).toBe('seated');
    expect(await eventTypesOf(id)).toEqual(['reservation_created', 'guest_seated']);
  });
});

describe('daily purge', () => {
  it('deletes 30-day trashed guests, expired idempotency keys and old concluded deliveries, and expires past waiting-list entries', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    const old = (await api.post('/guests', { venueId: t.venueId, phone: '347 111 0001' })).body.guest;
    const recent = (await api.post('/guests', { venueId: t.venueId, phone: '347 111 0002' })).body.guest;
    await api.delete(`/guests/${old.id}`);
    await api.delete(`/guests/${recent.id}`);
    await db()
      .update(guests)
      .set({ deletedAt: sql`clock_timestamp() - interval '31 days'` })
      .where(eq(guests.id, old.id));

    const [event] = await db()
      .insert(events)
      .values({
        organisationId: t.organisationId,
        venueId: t.venueId,
        type: 'webhook_test',
        subjectType: 'none',
        subjectId: null,
        data: {},
        livemode: true,
      })
      .returning();
    const [automation] = await db()
      .insert(automations)
      .values({
        organisationId: t.organisationId,
        venueId: t.venueId,
        name: 'a',
        eventTypes: ['webhook_test'],
        conditions: { partySizeMin: null, partySizeMax: null, sources: null },
        action: { type: 'partner_notification', url: 'https://example.com/hook', endpointId: null, delayMinutes: 0 },
      })
      .returning();
    const [run] = await db().insert(automationRuns).values({ automationId: automation.id, eventId: event.id }).returning();
    const delivery = (n: number, status: 'pending' | 'delivered' | 'discarded', daysAgo: number) => ({
      organisationId: t.organisationId,
      venueId: t.venueId,
      eventId: event.id,
      eventType: 'webhook_test',
      automationId: automation.id,
      runId: run.id,
      actionIndex: n,
      idempotencyKey: `automation:${run.id}:${n}`,
      destination: 'url' as const,
      url: 'https://example.com/hook',
      status,
      updatedAt: sql`clock_timestamp() - make_interval(days => ${daysAgo})` as unknown as Date,
    });
    const rows = await db()
      .insert(webhookDeliveries)
      .values([delivery(0, 'delivered', 31), delivery(1, 'discarded', 40), delivery(2, 'delivered', 5), delivery(3, 'pending', 60)])
      .returning({ id: webhookDeliveries.id });

    const yesterday = localDate(-1);
    await db()
      .insert(waitlistEntries)
      .values([
        { organisationId: t.organisationId, venueId: t.venueId, serviceDate: yesterday, partySize: 2, position: 1, name: 'Past waiting' },
        {
          organisationId: t.organisationId,
          venueId: t.venueId,
          serviceDate: yesterday,
          partySize: 2,
          position: 2,
          name: 'Past notified',
          status: 'notified',
        },
        {
          organisationId: t.organisationId,
          venueId: t.venueId,
          serviceDate: yesterday,
          partySize: 2,
          position: 3,
          name: 'Past converted',
          status: 'converted',
        },
        { organisationId: t.organisationId, venueId: t.venueId, serviceDate: localDate(0), partySize: 2, position: 1, name: 'Today' },
      ]);

    await runTimerJobsConcurrently('daily-purge', 2);

    const remainingGuests = await db().select({ id: guests.id }).from(guests).where(eq(guests.venueId, t.venueId));
    expect(remainingGuests.map((g) => g.id)).toEqual([recent.id]);
    const remainingDeliveries = await db()
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        inArray(
          webhookDeliveries.id,
          rows.map((r) => r.id),
        ),
      );
    expect(remainingDeliveries.map((d) => d.id).sort()).toEqual([rows[2].id, rows[3].id].sort());
    // The kept pending row was written without a job, as no service writes one: removed, so the run's
    // database holds no delivery nothing will attempt when the suite ends (the check after the suite).
    await db().delete(webhookDeliveries).where(eq(webhookDeliveries.id, rows[3].id));
    const entries = await db()
      .select()
      .from(waitlistEntries)
      .where(eq(waitlistEntries.venueId, t.venueId))
      .orderBy(asc(waitlistEntries.name));
    expect(entries.map((e) => [e.name, e.status])).toEqual([
      ['Past converted', 'converted'],
      ['Past notified', 'expired'],
      ['Past waiting', 'expired'],
      ['Today', 'waiting'],
    ]);
  });
});
