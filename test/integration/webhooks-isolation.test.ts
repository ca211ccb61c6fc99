import { inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { metricsRegistry } from '../../src/metrics/counters.js';
import { client, createTenant } from '../support/harness.js';
import { emitReservationEvent, eventIdOf, useWebhookPipeline } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: no worker of another test file may take these jobs.
useOwnQueuePrefix('iso');

const pipeline = useWebhookPipeline();
const destinationLimit = 4; // WEBHOOK_DESTINATION_CONCURRENCY's default
const bookings = 120;

/** Milliseconds from each event's creation to its arrival at the receiver, for the given events. */
function latencies(received: ReceivedWebhook[], eventIds: Set<string>): number[] {
  return received
    .map((r) => JSON.parse(r.body.toString('utf8')) as { eventId: string; createdAt: string })
    .map((body, i) => ({ body, at: received[i].receivedAt }))
    .filter(({ body }) => eventIds.has(body.eventId))
    .map(({ body, at }) => at - Date.parse(body.createdAt));
}

/** Runs of delivery jobs in this process (the webhooks role runs here) that ended postponed, from its job_duration_seconds histogram. */
async function postponedRuns(): Promise<number> {
  const text = await metricsRegistry.getSingleMetricAsString('job_duration_seconds');
  const line = new RegExp(`^job_duration_seconds_count\\{queue="${webhookDeliveryJob.queueName}",outcome="postponed"\\} (\\d+)$`, 'm');
  return Number(line.exec(text)?.[1] ?? 0);
}

function p99(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)];
}

async function emitBookings(tenant: Awaited<ReturnType<typeof createTenant>>): Promise<Set<string>> {
  const emitted = await Promise.all(Array.from({ length: bookings }, () => emitReservationEvent(tenant)));
  return new Set(emitted.map((e) => e.eventId));
}

async function receivedByKey(receiver: WebhookReceiver): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const r of receiver.received) {
    const key = String(r.headers['x-service-idempotency-key']);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

describe('delivery isolation per destination (docs/webhooks.md "Isolation per destination")', () => {
  // First: the timing-out destination of the next test keeps its jobs coming back, postponed, for minutes.
  it("a quick destination's backlog left due in the queue drains with each job run once, and holds back no other organisation's delivery", async () => {
    const [busy, other] = [await createTenant(), await createTenant()];
    // About 10 ms an attempt: quick, and slow enough that 4 slots take a few seconds over the backlog.
    const quick = await pipeline.startReceiver(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      return 200;
    });
    const otherReceiver = await pipeline.startReceiver();
    const automation = (tenant: typeof busy, url: string) =>
      client(pipeline.url, tenant.key).post('/automations', {
        venueId: tenant.venueId,
        name: 'Partner',
        eventTypes: ['reservation_created'],
        action: { type: 'partner_notification', url },
      });
    expect((await automation(busy, quick.url)).status).toBe(201);
    expect((await automation(other, otherReceiver.url)).status).toBe(201);
    // The worker measures the destination quick at its first attempt.
    await emitReservationEvent(busy);
    await quick.waitFor(1);

    // The workers stopped while a backlog forms (an outage, a paused queue): the deliveries enqueued
    // held back come due meanwhile, and all of them are in the queue when the workers come back.
    const queue = getQueue(webhookDeliveryJob.queueName);
    const backlog = 300;
    const postponedBefore = await postponedRuns();
    await queue.pause();
    try {
      for (let i = 0; i < backlog; i += 50) await Promise.all(Array.from({ length: 50 }, () => emitReservationEvent(busy)));
      await eventually(
        async () => ((await queue.getJobCounts('prioritized')).prioritized >= backlog ? true : undefined),
        60_000,
        'the backlog due in the queue',
        100,
      );
    } finally {
      await queue.resume();
    }
    await quick.waitFor(1 + 20, 20_000);
    const { eventId } = await emitReservationEvent(other);
    const [arrived] = await otherReceiver.waitFor(1, 20_000);
    expect(eventIdOf(arrived)).toBe(eventId);
    // Served in its fair turn, while most of the backlog was still to go.
    const backlogDoneThen = quick.received.filter((r) => r.receivedAt <= arrived.receivedAt).length - 1;
    expect(backlogDoneThen, `${backlogDoneThen} of the backlog's ${backlog} delivered before the other organisation's`).toBeLessThan(
      backlog / 2,
    );

    await quick.waitFor(1 + backlog, 60_000);
    expect(quick.maxInFlight()).toBeLessThanOrEqual(destinationLimit);
    // Each job of the backlog ran once: it waited for its slot in its worker, not postponed and run again.
    const postponed = (await postponedRuns()) - postponedBefore;
    expect(postponed, `${postponed} runs of the backlog's ${backlog} jobs postponed`).toBeLessThanOrEqual(backlog / 20);
  }, 150_000);

  it('a destination that times out does not delay another one, and its postponed jobs keep their attempts', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const healthy = pipeline.receiver;
    const slow = await pipeline.startReceiver(() => 'hold'); // never answers: every attempt runs into the 10 s limit
    const automation = (name: string, url: string) =>
      api.post('/automations', {
        venueId: tenant.venueId,
        name,
        eventTypes: ['reservation_created'],
        action: { type: 'partner_notification', url },
      });

    // The healthy destination alone.
    expect((await automation('Healthy', healthy.url)).status).toBe(201);
    const alone = await emitBookings(tenant);
    await healthy.waitFor(bookings, 60_000);
    const aloneP99 = p99(latencies(healthy.received, alone));

    // The same burst with a destination beside it that holds every request until the timeout.
    const slowAutomation = await automation('Slow', slow.url);
    expect(slowAutomation.status).toBe(201);
    const beside = await emitBookings(tenant);
    await healthy.waitFor(2 * bookings, 60_000);
    const besideP99 = p99(latencies(healthy.received, beside));

    expect(besideP99, `healthy p99 ${besideP99} ms beside the slow destination, ${aloneP99} ms alone`).toBeLessThanOrEqual(
      2 * Math.max(aloneP99, 250),
    );
    expect(slow.received.length).toBeGreaterThanOrEqual(destinationLimit);
    expect(slow.maxInFlight()).toBeLessThanOrEqual(destinationLimit);

    // Postponements consume no attempt: each delivery's count is exactly the requests the slow destination saw.
    const slowDeliveries = () =>
      db()
        .select()
        .from(webhookDeliveries)
        .where(inArray(webhookDeliveries.automationId, [slowAutomation.body.automation.id]));
    await eventually(
      async () => {
        const counts = await receivedByKey(slow);
        const rows = await slowDeliveries();
        return rows.length === bookings && rows.every((d) => d.attempts === (counts.get(d.idempotencyKey) ?? 0));
      },
      20_000,
      'attempt counts equal to the requests received',
    );
    const rows = await slowDeliveries();
    expect(rows.every((d) => d.status === 'pending' && d.attempts <= 1)).toBe(true);
    const jobs = await Promise.all(rows.filter((d) => d.attempts === 0).map((d) => getQueue(webhookDeliveryJob.queueName).getJob(d.id)));
    // Jobs that ran more than once without a request made: postponed.
    const postponed = jobs.filter((j) => j && j.attemptsStarted > 1);
    expect(postponed.length).toBeGreaterThan(0);
    expect(postponed.every((j) => j!.attemptsMade === 0)).toBe(true);
  }, 150_000);
});
