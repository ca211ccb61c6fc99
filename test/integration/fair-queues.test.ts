import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';

// A queue prefix of this file alone: its workers must not take the jobs of other files, nor theirs.
vi.hoisted(() => {
  process.env.QUEUE_PREFIX = `{fair-${process.pid}-${Date.now()}}`;
});

const { addEventJobs } = await import('../../src/services/events/outbox.js');
const { queueNames } = await import('../../src/queues/queue-names.js');
const { closeQueues, getQueue } = await import('../../src/queues/queues.js');
const { startWorker } = await import('../../src/queues/start-worker.js');
const { eventually } = await import('../support/webhook-receiver.js');

const events = () => getQueue(queueNames.events);
const venueId = randomUUID();
const eventsOf = (organisationId: string, count: number) =>
  Array.from({ length: count }, () => ({ id: randomUUID(), organisationId, venueId, type: 'reservation_created' }));

/** Runs the events queue one job at a time, as a worker role does, recording the order. */
function recordOrder() {
  const order: Array<{ organisationId: string; eventId: string }> = [];
  const running = startWorker(
    queueNames.events,
    async (job: Job<{ eventId: string; organisationId: string }>) => {
      order.push({ organisationId: job.data.organisationId, eventId: job.data.eventId });
    },
    { concurrency: 1 },
  );
  return { order, close: running.close };
}

afterEach(async () => {
  await events().obliterate({ force: true });
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
});
