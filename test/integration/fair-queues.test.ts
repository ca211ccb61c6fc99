import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { addEventJobs, eventJob } from '../../src/jobs/event-job.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { destinationSlotTuning } from '../../src/lib/webhook-destination.js';
import { advanceVirtualTime, coalesceVirtualTimeMoves, restartVirtualTimeIfHigh, takeFairTurns } from '../../src/queues/fair-share.js';
import { closeQueues, getQueue, getQueueConnection } from '../../src/queues/queues.js';
import { redisKey } from '../../src/redis.js';
import { startJobWorker } from '../../src/queues/start-worker.js';
import { enqueueDeliveries } from '../../src/services/webhooks/enqueue-deliveries.js';
import { eventually } from '../support/eventually.js';
import { commandsSentDuring } from '../support/redis-monitor.js';
import { useFileSettings, useOwnQueuePrefix } from '../support/file-settings.js';
import { processConfig } from '../../src/config.js';

// A queue prefix of this file alone: its workers must not take the jobs of other files, nor theirs.
useOwnQueuePrefix('fair');
const config = useFileSettings({
  // A pace small enough to see: 50 events of an organisation at once, then 100 a second.
  EVENT_PACING_RATE: '100',
  EVENT_PACING_BURST: '50',
});
/** What enqueueDeliveries sends to the workers at once for one destination (DestinationSlots.holdBack). */
const sentAtOncePerDestination = () => config.WEBHOOK_DESTINATION_CONCURRENCY * destinationSlotTuning.sentAtOncePerSlot;

const events = () => getQueue(eventJob.queueName);
const deliveries = () => getQueue(webhookDeliveryJob.queueName);
const venueId = randomUUID();
const eventsOf = (organisationId: string, count: number) =>
  Array.from({ length: count }, () => ({ id: randomUUID(), organisationId, venueId, type: 'reservation_created' }));

/** Runs the events queue one job at a time, as a worker role does, recording the order. */
function recordOrder() {
  const order: Array<{ organisationId: string; eventId: string }> = [];
  const running = startJobWorker(eventJob, async ({ organisationId = '', eventId }) => void order.push({ organisationId, eventId }), {
    concurrency: 1,
  });
  return { order, close: running.close };
}

/** Another organisation takes a turn in the events queue (no job): the pace holds back only in company. */
const joinedByAnother = () =>
  takeFairTurns(eventJob.queueName, randomUUID(), 1, { perSecond: config.EVENT_PACING_RATE, burst: config.EVENT_PACING_BURST });

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
      const position = await eventually(
        async () => {
          const i = worker.order.findIndex((o) => o.eventId === quiet.id);
          return i >= 0 && i;
        },
        20_000,
        'the quiet organisation to be served',
      );
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
    await enqueueDeliveries(firstBatch, processConfig());
    await enqueueDeliveries(secondBatch, processConfig());
    // The second batch's first jobs start (the virtual time passes the first batch's tags), then the
    // first batch's delayed jobs come back, and B's delivery is enqueued.
    for (const d of secondBatch.slice(0, sentAtOncePerDestination()))
      await advanceVirtualTime(webhookDeliveryJob.queueName, (await deliveries().getJob(d.id))!);
    const returned = firstBatch.slice(sentAtOncePerDestination());
    for (const d of returned) await (await deliveries().getJob(d.id))!.promote();
    const [ofB] = deliveriesOf(b, `https://b-${randomUUID()}.example/hooks`, 1);
    await enqueueDeliveries([ofB], processConfig());

    const order: string[] = [];
    const worker = startJobWorker(webhookDeliveryJob, async ({ deliveryId }) => void order.push(deliveryId), { concurrency: 1 });
    try {
      await eventually(
        async () => order.includes(ofB.id) && returned.every((d) => order.includes(d.id)),
        20_000,
        'B and the returned jobs to run',
      );
    } finally {
      await worker.close();
    }
    const returnedFirst = Math.min(...returned.map((d) => order.indexOf(d.id)));
    expect(order.indexOf(ofB.id)).toBeLessThan(returnedFirst);
  });

  it("holds back an organisation's bulk beyond its burst at its pace, keeps its order and its later events behind it, and does not hold back another organisation", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    // 1,100 events: three chunks of the bulk enqueue, whose turns continue from one chunk to the next.
    const bulk = eventsOf(a, 1100);
    await joinedByAnother();
    await addEventJobs(bulk);
    const [ofB] = eventsOf(b, 1);
    await addEventJobs([ofB]);
    const [laterOfA] = eventsOf(a, 1);
    await addEventJobs([laterOfA]);

    const jobsOfA = await Promise.all([...bulk, laterOfA].map(async (e) => (await events().getJob(e.id))!));
    const dueAt = (job: (typeof jobsOfA)[number]) => job.timestamp + (job.delay ?? 0);
    const delays = jobsOfA.map((job) => job.delay ?? 0);
    // The burst goes to the line at once; the rest at 100 a second (on a 100 ms grid): the last of
    // 1,100 is due about 10.5 s after the first, however long the chunks took to add.
    expect(delays.slice(0, 51).every((delay) => delay === 0)).toBe(true);
    expect(delays[51]).toBeGreaterThan(0);
    expect(dueAt(jobsOfA[1099]) - dueAt(jobsOfA[0])).toBeGreaterThan(10_000);
    expect(dueAt(jobsOfA[1099]) - dueAt(jobsOfA[0])).toBeLessThan(11_000);
    for (let i = 1; i < jobsOfA.length; i++) {
      expect(dueAt(jobsOfA[i])).toBeGreaterThanOrEqual(dueAt(jobsOfA[i - 1]));
      expect(jobsOfA[i].opts.priority).toBeGreaterThan(jobsOfA[i - 1].opts.priority!);
    }
    expect(await events().getJobState(laterOfA.id)).toBe('delayed');
    const jobOfB = (await events().getJob(ofB.id))!;
    expect(jobOfB.delay ?? 0).toBe(0);
    expect(await events().getJobState(ofB.id)).toBe('prioritized');
  });

  it("runs a paced bulk in its order, no faster than its pace, with another organisation's job served at once", async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    const bulk = eventsOf(a, 250);
    await joinedByAnother();
    const enqueuedAt = Date.now();
    await addEventJobs(bulk);
    const worker = recordOrder();
    try {
      await eventually(async () => worker.order.length >= 50, 20_000, 'the burst to run');
      const [ofB] = eventsOf(b, 1);
      await addEventJobs([ofB]);
      await eventually(async () => worker.order.some((o) => o.eventId === ofB.id), 20_000, "B's job to run");
      // B ran while most of A's bulk still waited for its pace.
      expect(worker.order.length).toBeLessThan(200);
      await eventually(async () => worker.order.length === 251, 20_000, "A's bulk to drain");
    } finally {
      await worker.close();
    }
    // 200 events beyond the burst at 100 a second: about 2 s; without the pace they run in a fraction of it.
    // A lower bound is the point (no faster than the pace); a busy machine only makes the run longer.
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(1900);
    expect(worker.order.filter((o) => o.organisationId === a).map((o) => o.eventId)).toEqual(bulk.map((e) => e.id));
  });

  it("does not restart the count while an organisation's jobs are held back, so its later jobs stay behind them", async () => {
    const a = randomUUID();
    // The count is past its restart point (a job with a high tag started).
    const high = { priority: 150_000, opts: {} } as Parameters<typeof advanceVirtualTime>[1];
    await advanceVirtualTime(eventJob.queueName, high);
    const bulk = eventsOf(a, 200);
    await joinedByAnother();
    await addEventJobs(bulk);
    // The queue looks empty to a worker between two paced steps: it would restart the count there.
    await restartVirtualTimeIfHigh(eventJob.queueName);
    const [later] = eventsOf(a, 1);
    await addEventJobs([later]);
    const lastOfBulk = (await events().getJob(bulk[199].id))!;
    const laterJob = (await events().getJob(later.id))!;
    expect(laterJob.opts.priority).toBeGreaterThan(lastOfBulk.opts.priority!);
  });
  it("moves the virtual time of a worker's jobs that start together in one round trip, to the highest of their priorities", async () => {
    const queue = `coalesced-${randomUUID()}`;
    const virtualTime = redisKey(['fair', queue], 'virtual-time');
    const advance = coalesceVirtualTimeMoves(queue);
    await deliveries().waitUntilReady();
    const job = (priority: number) => ({ priority, opts: {} }) as Parameters<typeof advance>[0];
    const moved: number[] = [];
    const sent = await commandsSentDuring(
      config.REDIS_URL ?? 'redis://127.0.0.1:6379',
      getQueueConnection(),
      () =>
        Promise.all(
          [5, 40, 12, 30, 7].map(async (priority) => {
            await advance(job(priority));
            // A job runs only once the virtual time holds its priority.
            moved.push(Number(await getQueueConnection().get(virtualTime)) - priority);
          }),
        ),
      ({ line }) => line.includes(virtualTime),
    );
    // EVAL the first time this connection runs the script, EVALSHA after.
    expect(sent.filter((c) => c.name.startsWith('eval'))).toHaveLength(1);
    expect(moved.every((ahead) => ahead >= 0)).toBe(true);
    expect(Number(await getQueueConnection().get(virtualTime))).toBe(40);
    // Behind the line (or untagged): no move, no round trip.
    await advance(job(0));
    expect(Number(await getQueueConnection().get(virtualTime))).toBe(40);
  });

  describe('the pace holds back only in company', () => {
    // A queue name of each test's own: its keys start empty, with no organisation seen before.
    const pace = (companyMs?: number) => ({ perSecond: 100, burst: 50, companyMs });
    const lastDue = (turns: Array<{ delay: number; timestamp?: number }>) => {
      const last = turns[turns.length - 1];
      return (last.timestamp ?? 0) + last.delay;
    };

    it('lets a lone organisation run its bulk at once, and paces it as soon as another organisation takes a turn', async () => {
      const queue = `pace-${randomUUID()}`;
      const [a, b] = [randomUUID(), randomUUID()];
      const alone = await takeFairTurns(queue, a, 300, pace());
      expect(alone.every((turn) => turn.delay === 0)).toBe(true);
      const ofB = await takeFairTurns(queue, b, 1, pace());
      expect(ofB[0].delay).toBe(0);
      const inCompany = await takeFairTurns(queue, a, 300, pace());
      // Its full burst, then 100 a second: the last of 300 about 2.5 s from now.
      expect(inCompany.slice(0, 51).every((turn) => turn.delay === 0)).toBe(true);
      expect(inCompany[51].delay).toBeGreaterThan(0);
      expect(inCompany[299].delay).toBeGreaterThan(2300);
      expect(inCompany[299].priority).toBeGreaterThan(alone[299].priority);
    });

    it('keeps a held-back organisation paced after the others went quiet, so that its later jobs stay behind', async () => {
      const queue = `pace-${randomUUID()}`;
      const [a, b] = [randomUUID(), randomUUID()];
      await takeFairTurns(queue, b, 1, pace(300));
      const heldBack = await takeFairTurns(queue, a, 300, pace(300));
      expect(heldBack[299].delay).toBeGreaterThan(2000);
      // Once the company window (companyMs, 300 ms) has passed since the last turn, Redis drops the queue's
      // record of recent organisations: B is gone, A alone, but still ahead of its pace (a 2 s lead).
      await eventually(
        async () => (await getQueueConnection().exists(redisKey(['fair', queue], 'recent'))) === 0,
        5000,
        'the company window to close',
        20,
      );
      const [later] = await takeFairTurns(queue, a, 1, pace(300));
      expect(later.delay).toBeGreaterThan(0);
      expect(lastDue([later])).toBeGreaterThanOrEqual(lastDue(heldBack));
    });
  });
});
