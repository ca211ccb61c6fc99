import type { WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { z } from 'zod';
import { mapInChunks } from '../lib/chunks.js';
import { maxDeliveryAttempts, webhookBackoffStrategy, type RetrySchedule } from '../lib/webhook-backoff.js';
import type { Config } from '../config.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { getQueue } from '../queues/queues.js';

/** worker-webhooks: one attempt of one delivery (src/services/webhooks/deliver-webhook-job.ts). */
// The ids besides the delivery's own are for operators searching Bull Board (jobs of older releases lack them).
const webhookDeliveryJobSchema = z.object({
  deliveryId: z.uuid(),
  // The destination the delivery was enqueued for (a hint, see src/services/webhooks/enqueue-deliveries.ts), or where it was
  // postponed because that destination was saturated: the next run takes a slot of that destination
  // before reading the database.
  destination: z.string().optional(),
  organisationId: z.uuid().optional(),
  venueId: z.uuid().optional(),
  eventId: z.uuid().optional(),
  endpointId: z.uuid().nullable().optional(),
  automationId: z.uuid().optional(),
  // A recovery sent in event order (docs/webhooks.md "Recovery"): the first attempt waits for the
  // outcome of the `after` delivery's, and wakes the `next` one once its own outcome is known.
  after: z.uuid().optional(),
  next: z.uuid().optional(),
  // The span of the events job that created the delivery, which its first attempt continues (W3C
  // headers; only while tracing is on: docs/operations.md "Tracing").
  trace: z.record(z.string(), z.string()).optional(),
});
export type WebhookDeliveryJob = z.infer<typeof webhookDeliveryJobSchema>;

const thirtyDaysSeconds = 30 * 24 * 3600;

export const webhookDeliveryJob: JobDefinition<WebhookDeliveryJob> = {
  queueName: 'webhook-delivery',
  schema: webhookDeliveryJobSchema,
  fair: true,
  // Five attempts on the schedule of docs/webhooks.md; failed jobs stay as the discard list of Bull
  // Board. A completed job is removed at once: the delivery row is its history, and keeping jobs
  // costs Redis work at every completion.
  jobOptions: {
    attempts: maxDeliveryAttempts,
    backoff: { type: 'webhook' },
    removeOnComplete: true,
    removeOnFail: { age: thirtyDaysSeconds },
  },
  // Concurrency, lock and the custom backoff are the deployment's: webhookWorkerOptions.
  workerOptions: {},
};

/** The options worker-webhooks runs the delivery jobs with: the deployment's concurrency and lock, and the retry schedule. */
export function webhookWorkerOptions(
  config: Pick<Config, 'WEBHOOK_WORKER_CONCURRENCY' | 'WEBHOOK_WORKER_LOCK_MS'>,
  retry: RetrySchedule,
): Partial<WorkerOptions> {
  return {
    concurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    settings: { backoffStrategy: webhookBackoffStrategy(retry.backoffScale) },
    // A worker that dies mid-delivery loses its lock; another worker takes the job over once it expires.
    lockDuration: config.WEBHOOK_WORKER_LOCK_MS,
    stalledInterval: config.WEBHOOK_WORKER_LOCK_MS,
  };
}

/** Moves a postponed (delayed) delivery job to the waiting list now; false when it is not delayed, or not there. */
export async function promoteDeliveryJob(id: string): Promise<boolean> {
  const job = await getQueue(webhookDeliveryJob.queueName).getJob(id);
  return job
    ? job.promote().then(
        () => true,
        () => false,
      )
    : false;
}

/** Removes waiting or delayed jobs; a job being attempted right now is left to notice the row's state. */
export async function removeDeliveryJobs(ids: string[]): Promise<void> {
  const queue = getQueue(webhookDeliveryJob.queueName);
  await Promise.all(ids.map((id) => queue.remove(id)));
}

/** Best effort after the commit that annulled these deliveries: a job left behind finds its row discarded and sends nothing. */
export function dropAnnulledJobs(ids: string[], log: Logger): void {
  if (!ids.length) return;
  removeDeliveryJobs(ids).catch((err: unknown) =>
    log.warn({ err: (err as Error).message, count: ids.length }, 'annulled delivery jobs not removed'),
  );
}

/** Clears the finished job of a delivery so that a new cycle can start under the same jobId; false while an attempt runs. */
export async function clearFinishedDeliveryJob(id: string): Promise<boolean> {
  const queue = getQueue(webhookDeliveryJob.queueName);
  const job = await queue.getJob(id);
  if (!job) return true;
  // Only a finished job: a waiting one is the new cycle a concurrent redelivery has just enqueued
  // (removing it would leave the reopened delivery to the sweep).
  const state = await job.getState();
  if (state !== 'completed' && state !== 'failed') return false;
  await job.remove();
  return !(await queue.getJob(id));
}

/** clearFinishedDeliveryJob for many deliveries, a chunk at a time: the ids whose job id is free. */
export async function clearFinishedDeliveryJobs(ids: string[]): Promise<string[]> {
  return mapInChunks(ids, async (chunk) => {
    const cleared = await Promise.all(chunk.map(clearFinishedDeliveryJob));
    return chunk.filter((_, i) => cleared[i]);
  });
}
