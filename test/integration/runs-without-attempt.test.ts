import { randomUUID } from 'node:crypto';
import { DelayedError } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { behindTheLine } from '../../src/queues/fair-share.js';
import { closeQueues, getQueue } from '../../src/queues/queues.js';
import { startJobWorker } from '../../src/queues/start-worker.js';
import { runsWithoutAttemptOf } from '../../src/roles/webhook-delivery-handler.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// A postponed delivery job doubles its fallback delay with each postponement, counted from BullMQ's
// own counts of its runs rather than written into its data (one round trip fewer per postponement).
// Against a real queue: the counts after postponements and after a failed attempt.
useOwnQueuePrefix('runs');

afterAll(async () => {
  await getQueue(webhookDeliveryJob.queueName).obliterate({ force: true });
  await closeQueues();
});

describe('the runs of a delivery job that consumed no attempt, from BullMQ’s counts', () => {
  it('counts postponements (moved to the delayed set) and not failed attempts: 0, 1, 2, then 2 after a failure, 3', async () => {
    const seen: number[] = [];
    // Each run: postponed, postponed, failed (an attempt consumed, retried by BullMQ), postponed, done.
    const plan = ['postpone', 'postpone', 'fail', 'postpone', 'complete'] as const;
    const worker = startJobWorker(
      webhookDeliveryJob,
      async (_payload, job, _log, token) => {
        seen.push(runsWithoutAttemptOf(job));
        const step = plan[seen.length - 1];
        if (step === 'postpone') {
          await job.moveToDelayed(Date.now() + 10, token);
          throw new DelayedError();
        }
        if (step === 'fail') throw new Error('the partner answered 500');
      },
      { concurrency: 1, settings: { backoffStrategy: () => 10 } },
    );
    try {
      await getQueue(webhookDeliveryJob.queueName).add(
        'runs',
        { deliveryId: randomUUID() },
        { ...webhookDeliveryJob.jobOptions, backoff: { type: 'custom' }, jobId: randomUUID(), priority: behindTheLine - 1 },
      );
      await eventually(async () => seen.length === plan.length || undefined, 20_000, 'the five runs');
    } finally {
      await worker.close();
    }
    expect(seen).toEqual([0, 1, 2, 2, 3]);
  });
});
