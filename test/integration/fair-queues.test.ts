import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

// A queue prefix of this file alone: its workers must not take the jobs of other files, nor theirs.
vi.hoisted(() => {
  process.env.QUEUE_PREFIX = `{fair-${process.pid}-${Date.now()}}`;
});

const { addEventJobs, eventJob } = await import('../../src/jobs/event-job.js');
const { enqueueDeliveries, webhookDeliveryJob } = await import('../../src/jobs/webhook-delivery-job.js');
const { config } = await import('../../src/config.js');
const { destinationSlotTuning } = await import('../../src/lib/webhook-destination.js');
/** What enqueueDeliveries sends to the workers at once for one destination (DestinationSlots.holdBack). */
const sentAtOncePerDestination = () => config.WEBHOOK_DESTINATION_CONCURRENCY * destinationSlotTuning.sentAtOncePerSlot;
const { advanceVirtualTime } = await import('../../src/queues/fair-share.js');
const { closeQueues, getQueue } = await import('../../src/queues/queues.js');
const { startJobWorker } = await import('../../src/queues/start-worker.js');
const { eventually } = await import('../support/webhook-receiver.js');

const events = () => getQueue(eventJob.queueName);
const deliveries = () => getQueue(webhookDeliveryJob.queueName);
const venueId = randomUUID();
const eventsOf = (organisationId: string, count: number) =>
  Array.from({ length: count }, () => ({ id: randomUUID(), organisationId, venueId, type: 'reservation_created' }));

/** Runs the events queue one job at a time, as a worker role does, recording the order. */
function recordOrder() {
  const order: Array<{ organisationId: string; eventId: string }> = [];
  const running = startJobWorker(eventJob, async ({ organisationId = '', eventId }) => void order.push({ organisationId, eventId }), { concurrency: 1 });
  return { order, close: running.close };
}

afterEach(async () => {
  await Promise.all([events().obliterate({ force: true }), deliveries().obliterate({ force: true })]);
});

afterAll(async () => {
  await closeQueues();
});

describe('fair queues (start-time fair queuing on BullMQ priorities)', () => {
  it("serves an organisation's new job right after the jobs already started, not behind another's backlog", async () => {
    const busy = randomUUID();
    await addEventJobs(eventsOf(busy, 3000));
    const worker = recordOrder();
    try {
      await eventually(async () => worker.order.length >= 20, 20_000, 'the backlog to start');
      const [quiet] = eventsOf(randomUUID(), 1);
      const startedBefore = worker.order.length;
      await addEventJobs([quiet]);
      const position = await eventually(async () => {
        const i = worker.order.findIndex((o) => o.eventId === quiet.id);
        return i >= 0 && i;
      }, 20_000, 'the quiet organisation to be served');
      // One job of the backlog may have started between the two reads; never the thousands behind.
      expect(position - startedBefore).toBeLessThanOrEqual(2);
      expect(worker.order.length).toBeLessThan(3000);
    } finally {
      await worker.close();
    }
  });

  it('has two organisations with backlogs take turns, each in the order it enqueued', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const jobsOfA = eventsOf(a, 60);
    const jobsOfB = eventsOf(b, 60);
    await addEventJobs(jobsOfA);
    await addEventJobs(jobsOfB);
    const worker = recordOrder();
    try {
      await eventually(async () => worker.order.length === 120, 20_000, 'both backlogs to drain');
    } finally {
      await worker.close();
    }
    const firstForty = worker.order.slice(0, 40);
    const servedA = firstForty.filter((o) => o.organisationId === a).length;
    expect(Math.abs(servedA - (40 - servedA))).toBeLessThanOrEqual(2);
    expect(worker.order.filter((o) => o.organisationId === a).map((o) => o.eventId)).toEqual(jobsOfA.map((e) => e.id));
    expect(worker.order.filter((o) => o.organisationId === b).map((o) => o.eventId)).toEqual(jobsOfB.map((e) => e.id));
  });

  it('names event jobs after their type and carries the ids an operator searches by', async () => {
    const [event] = eventsOf(randomUUID(), 1);
    await addEventJobs([event]);
    const job = await events().getJob(event.id);
    expect(job?.name).toBe('reservation_created');
    expect(job?.data).toEqual({ eventId: event.id, organisationId: event.organisationId, venueId });
    expect(job?.opts.priority).toBeGreaterThan(0);
  });

  it("runs a delivery that waited in the delayed set behind the line, not ahead of another organisation's newer job", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const deliveriesOf = (organisationId: string, url: string, count: number) =>
      Array.from({ length: count }, () => ({
        id: randomUUID(),
        organisationId,
        venueId,
        eventId: randomUUID(),
        eventType: 'reservation_created',
        automationId: randomUUID(),
        endpointId: null,
        url,
        nextAttemptAt: null,
      }));
    // A's partner gets two batches; beyond the first few of each, the jobs are enqueued delayed.
    const urlOfA = `https://a-${randomUUID()}.example/hooks`;
    const firstBatch = deliveriesOf(a, urlOfA, sentAtOncePerDestination() + 12);
    const secondBatch = deliveriesOf(a, urlOfA, sentAtOncePerDestination() + 12);
    await enqueueDeliveries(firstBatch);
    await enqueueDeliveries(secondBatch);
    // The second batch's first jobs start (the virtual time passes the first batch's tags), then the
    // first batch's delayed jobs come back, and B's delivery is enqueued.
    for (const d of secondBatch.slice(0, sentAtOncePerDestination())) await advanceVirtualTime(webhookDeliveryJob.queueName, (await deliveries().getJob(d.id))!);
    const returned = firstBatch.slice(sentAtOncePerDestination());
    for (const d of returned) await (await deliveries().getJob(d.id))!.promote();
    const [ofB] = deliveriesOf(b, `https://b-${randomUUID()}.example/hooks`, 1);
    await enqueueDeliveries([ofB]);

    const order: string[] = [];
    const worker = startJobWorker(webhookDeliveryJob, async ({ deliveryId }) => void order.push(deliveryId), { concurrency: 1 });
    try {
      await eventually(async () => order.includes(ofB.id) && returned.every((d) => order.includes(d.id)), 20_000, 'B and the returned jobs to run');
    } finally {
      await worker.close();
    }
    const returnedFirst = Math.min(...returned.map((d) => order.indexOf(d.id)));
    expect(order.indexOf(ofB.id)).toBeLessThan(returnedFirst);
  });
});
