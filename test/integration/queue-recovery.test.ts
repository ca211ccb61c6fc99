import { randomUUID } from 'node:crypto';
import { and, count, eq, inArray, isNull, sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { db, pool } from '../../src/db/client.js';
import { automationRuns, automations, events, webhookDeliveries } from '../../src/db/schema/index.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { behindTheLine } from '../../src/queues/fair-share.js';
import { closeQueues, getQueue } from '../../src/queues/queues.js';
import { startEventsRole } from '../../src/roles/events.js';
import { catchUpSweepJobId, timerJob, timerSchedules, upsertTimerSchedules } from '../../src/jobs/timer-job.js';
import { sweepOutbox } from '../../src/services/outbox/sweep-outbox.js';
import { sweepDeliveries } from '../../src/services/webhooks/sweep-deliveries.js';
import { createTenant } from '../support/harness.js';
import { addEventJobs, eventJob } from '../../src/jobs/event-job.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { useOwnDatabase } from '../support/own-database.js';
import { processConfig } from '../../src/config.js';

// Queues and a database of its own: the sweepers act on every stale row of a database, and no
// worker of another test file may take these jobs.
useOwnQueuePrefix('recovery');
const ownDatabase = await useOwnDatabase('recovery');

afterAll(async () => {
  await closeQueues();
  await pool().end();
  await ownDatabase.drop();
});

/** Event rows committed `secondsAgo` seconds ago whose jobs never reached Redis (it was down, or lost them). */
async function strandEvents(tenant: { organisationId: string; venueId: string }, n: number, secondsAgo: number, livemode = false) {
  const rows = Array.from({ length: n }, () => ({
    organisationId: tenant.organisationId,
    venueId: tenant.venueId,
    livemode,
    type: 'reservation_created',
    subjectType: 'none' as const,
    subjectId: null,
    data: { reservation: { id: randomUUID(), partySize: 2 } },
    createdAt: sql`clock_timestamp() - make_interval(secs => ${secondsAgo})` as unknown as Date,
  }));
  const ids: string[] = [];
  for (let i = 0; i < rows.length; i += 1000) {
    ids.push(
      ...(
        await db()
          .insert(events)
          .values(rows.slice(i, i + 1000))
          .returning({ id: events.id })
      ).map((r) => r.id),
    );
  }
  return ids;
}

describe('the outbox sweeper after an outage', () => {
  it('hands back every stale event in one run, in bulk, leaves recent ones to their process, and adds nothing twice', async () => {
    const tenant = await createTenant({ test: true });
    const stranded = await strandEvents(tenant, 2500, 60);
    const recent = await strandEvents(tenant, 5, 1);
    const queue = getQueue(eventJob.queueName);

    expect(await sweepOutbox()).toBe(2500);
    // In line, or held back at the organisation's pace (docs/architecture.md "Fair queues").
    const pending = () => queue.getJobCountByTypes('prioritized', 'delayed');
    expect(await pending()).toBe(2500);
    const recentStates = await Promise.all(recent.map((id) => queue.getJobState(id)));
    expect(recentStates.every((s) => s === 'unknown')).toBe(true);
    // Their jobs wait: a second sweep (or a process enqueueing them itself) adds nothing.
    expect(await sweepOutbox()).toBe(0);
    expect(await pending()).toBe(2500);

    const stop = await startEventsRole(processConfig());
    try {
      await eventually(
        async () => {
          const [left] = await db()
            .select({ n: count() })
            .from(events)
            .where(and(inArray(events.id, stranded), isNull(events.dispatchedAt)));
          return left.n === 0;
        },
        60_000,
        'the stranded events to be dispatched',
      );
    } finally {
      await stop();
      // The recent ones stay undispatched (no process is left to enqueue them): concluded here, so
      // that the catch-up tests below, once they are 5 s old, do not find them stranded.
      await db()
        .update(events)
        .set({ dispatchedAt: sql`clock_timestamp()` })
        .where(inArray(events.id, recent));
    }
  }, 90_000);
});

describe('the catch-up sweep', () => {
  it('is scheduled for the moment stranded events committed 5 to 30 s ago turn 30 s old, once, not for events queued behind others', async () => {
    const tenant = await createTenant({ test: true });
    const timers = getQueue(timerJob.queueName);
    await timers.obliterate({ force: true });
    const young = await strandEvents(tenant, 3, 10);
    try {
      await sweepOutbox();
      const job = await timers.getJob(catchUpSweepJobId);
      expect(job?.data).toEqual({ task: 'outbox-sweep' });
      expect(await job!.getState()).toBe('delayed');
      // 10 s old now: 30 s old in 20 s (and half a second more, so that they are past it).
      expect(job!.opts.delay).toBeGreaterThan(18_000);
      expect(job!.opts.delay).toBeLessThanOrEqual(20_500);
      await sweepOutbox();
      expect(await timers.getDelayedCount()).toBe(1);

      // Due in 2 s: 5 s from now, the least spacing between catch-ups.
      await timers.obliterate({ force: true });
      await db()
        .update(events)
        .set({ createdAt: sql`clock_timestamp() - interval '28 seconds'` })
        .where(inArray(events.id, young));
      await sweepOutbox();
      expect((await timers.getJob(catchUpSweepJobId))?.opts.delay).toBe(5000);

      // Queued behind others (they have their jobs), not stranded: no catch-up.
      await timers.obliterate({ force: true });
      await addEventJobs(await db().select().from(events).where(inArray(events.id, young)));
      await sweepOutbox();
      expect(await timers.getJob(catchUpSweepJobId)).toBeUndefined();
      await getQueue(eventJob.queueName).obliterate({ force: true });
    } finally {
      await db()
        .update(events)
        .set({ dispatchedAt: sql`clock_timestamp()` })
        .where(inArray(events.id, young));
      await timers.obliterate({ force: true });
    }
  });

  it('is not scheduled when no event is left undispatched for more than a few seconds', async () => {
    const tenant = await createTenant({ test: true });
    const timers = getQueue(timerJob.queueName);
    await timers.obliterate({ force: true });
    // What the tests above left undispatched (their "recent" events) is seconds old by now.
    await db()
      .update(events)
      .set({ dispatchedAt: sql`clock_timestamp()` })
      .where(isNull(events.dispatchedAt));
    const justCommitted = await strandEvents(tenant, 3, 1);
    try {
      await sweepOutbox();
      expect(await timers.getJob(catchUpSweepJobId)).toBeUndefined();
    } finally {
      await db()
        .update(events)
        .set({ dispatchedAt: sql`clock_timestamp()` })
        .where(inArray(events.id, justCommitted));
    }
  });
});

/**
 * `count` deliveries of one automation to one URL, due two minutes ago, their events dispatched;
 * those for which `attemptedJustNow` holds began an attempt 5 s ago (a worker may be posting it).
 */
async function overdueDeliveries(name: string, count: number, attemptedJustNow: (i: number) => boolean = () => false) {
  const tenant = await createTenant();
  const [automation] = await db()
    .insert(automations)
    .values({
      organisationId: tenant.organisationId,
      venueId: tenant.venueId,
      name,
      eventTypes: ['reservation_created'],
      conditions: { partySizeMin: null, partySizeMax: null, sources: null },
      action: { type: 'partner_notification', url: 'https://partner.example/hooks', endpointId: null, delayMinutes: 0 },
    })
    .returning();
  const eventIds = await strandEvents(tenant, count, 120, true);
  await db()
    .update(events)
    .set({ dispatchedAt: sql`clock_timestamp()` })
    .where(inArray(events.id, eventIds));
  const runs = await db()
    .insert(automationRuns)
    .values(eventIds.map((eventId) => ({ automationId: automation.id, eventId })))
    .returning();
  const deliveryRows = runs.map((run, i) => ({
    organisationId: tenant.organisationId,
    venueId: tenant.venueId,
    eventId: run.eventId,
    eventType: 'reservation_created',
    automationId: automation.id,
    runId: run.id,
    actionIndex: 0,
    idempotencyKey: `automation:${run.id}:0`,
    destination: 'url' as const,
    url: 'https://partner.example/hooks',
    nextAttemptAt: sql`clock_timestamp() - interval '2 minutes'` as unknown as Date,
    lastAttemptAt: attemptedJustNow(i) ? (sql`clock_timestamp() - interval '5 seconds'` as unknown as Date) : null,
    attempts: attemptedJustNow(i) ? 1 : 0,
  }));
  const deliveries = await db().insert(webhookDeliveries).values(deliveryRows).returning({ id: webhookDeliveries.id });
  return { automationId: automation.id, deliveries };
}

describe('the delivery sweeper after an outage', () => {
  it('hands back every overdue delivery in bulk but not one whose attempt may still be under way', async () => {
    // The last five: an attempt began 5 s ago.
    const { automationId, deliveries } = await overdueDeliveries('Recovery', 1205, (i) => i >= 1200);
    const queue = getQueue(webhookDeliveryJob.queueName);

    expect(await sweepDeliveries(processConfig())).toBe(1200);
    const states = await Promise.all(deliveries.map((d) => queue.getJobState(d.id)));
    // One destination: the first few of each batch (1000, then 200) are sent at once, the others
    // enqueued already postponed behind them.
    const handedBack = states.slice(0, 1200);
    expect(handedBack.filter((s) => s === 'prioritized')).toHaveLength(16);
    expect(handedBack.filter((s) => s === 'delayed')).toHaveLength(1184);
    expect(states.slice(1200).every((s) => s === 'unknown')).toBe(true);
    expect(await sweepDeliveries(processConfig())).toBe(0);
    await db().delete(webhookDeliveries).where(eq(webhookDeliveries.automationId, automationId));
    await queue.obliterate({ force: true });
  });
});

describe('a delivery waiting behind the line', () => {
  it('takes a fresh place in the line once overdue, so that a queue that never empties cannot starve it', async () => {
    const { automationId, deliveries } = await overdueDeliveries('Behind the line', 3);
    const queue = getQueue(webhookDeliveryJob.queueName);
    await queue.obliterate({ force: true });
    // Their jobs came back from the delayed set behind the line, and another organisation's work keeps the queue busy.
    await queue.addBulk(
      deliveries.map((d) => ({ name: 'delivery', data: { deliveryId: d.id }, opts: { jobId: d.id, priority: behindTheLine } })),
    );
    await queue.add('delivery', { deliveryId: randomUUID() }, { jobId: randomUUID(), priority: 5 });

    expect(await sweepDeliveries(processConfig())).toBe(0);
    // In the order the sweep reads them (their organisation's order of attempts).
    const inSweepOrder = await db()
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.automationId, automationId))
      .orderBy(webhookDeliveries.nextAttemptAt, webhookDeliveries.id);
    expect(inSweepOrder).toHaveLength(deliveries.length);
    const priorities = await Promise.all(inSweepOrder.map(async (d) => Number((await queue.getJob(d.id))!.priority)));
    for (const priority of priorities) expect(priority).toBeLessThan(behindTheLine);
    expect([...priorities].sort((a, b) => a - b)).toEqual(priorities);
    await db().delete(webhookDeliveries).where(eq(webhookDeliveries.automationId, automationId));
    await queue.obliterate({ force: true });
  });
});

describe('timer schedules', () => {
  it('are upserted again without moving their next run, and come back when Redis has lost them', async () => {
    const queue = getQueue(timerJob.queueName);
    await upsertTimerSchedules(queue);
    const nextRuns = async () => Object.fromEntries((await queue.getJobSchedulers()).map((s) => [s.key, s.next]));
    const first = await nextRuns();
    expect(Object.keys(first).sort()).toEqual(timerSchedules.map((s) => s.id).sort());
    await upsertTimerSchedules(queue);
    expect(await nextRuns()).toEqual(first);

    await queue.obliterate({ force: true }); // what an emptied Redis leaves
    expect(await queue.getJobSchedulersCount()).toBe(0);
    await upsertTimerSchedules(queue);
    expect(Object.keys(await nextRuns()).sort()).toEqual(timerSchedules.map((s) => s.id).sort());
    await queue.obliterate({ force: true });
  });
});
