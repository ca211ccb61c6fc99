import type { Logger } from 'pino';
import { z } from 'zod';
import { config } from '../config.js';
import { mapInChunks } from '../lib/chunks.js';
import { maxDeliveryAttempts, webhookBackoffStrategy } from '../lib/webhook-backoff.js';
import { groupBy } from '../lib/group-by.js';
import { destinationOf } from '../lib/webhook-destination.js';
import { behindTheLine, takeFairPrioritiesOf } from '../queues/fair-share.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { getQueue, getQueueConnection } from '../queues/queues.js';
import { DestinationSlots } from '../services/webhooks/destination-slots.js';

/** worker-webhooks: one attempt of one delivery (src/services/webhooks/deliver-webhook-job.ts). */
// The ids besides the delivery's own are for operators searching Bull Board (jobs of older releases lack them).
const webhookDeliveryJobSchema = z.object({
  deliveryId: z.uuid(),
  // The destination the delivery was enqueued for (a hint, see enqueueDeliveries), or where it was
  // postponed because that destination was saturated: the next run looks at the destination's slots
  // before reading the database.
  destination: z.string().optional(),
  postponed: z.number().int().min(0).optional(),
  organisationId: z.uuid().optional(),
  venueId: z.uuid().optional(),
  eventId: z.uuid().optional(),
  endpointId: z.uuid().nullable().optional(),
  automationId: z.uuid().optional(),
  // A recovery sent in event order (docs/webhooks.md "Recovery"): the first attempt waits for the
  // outcome of the `after` delivery's, and wakes the `next` one once its own outcome is known.
  after: z.uuid().optional(),
  next: z.uuid().optional(),
});
export type WebhookDeliveryJob = z.infer<typeof webhookDeliveryJobSchema>;

/** The custom backoff of the webhook worker (registered as `settings.backoffStrategy`). */
export const webhookBackoff = webhookBackoffStrategy(config.WEBHOOK_BACKOFF_SCALE);

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
  workerOptions: {
    concurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    settings: { backoffStrategy: webhookBackoff },
    // A worker that dies mid-delivery loses its lock; another worker takes the job over once it expires.
    lockDuration: config.WEBHOOK_WORKER_LOCK_MS,
    stalledInterval: config.WEBHOOK_WORKER_LOCK_MS,
  },
};

/** The columns of a delivery row its job is made from. */
export interface DeliveryToEnqueue {
  id: string;
  organisationId: string;
  venueId: string;
  eventId: string;
  eventType: string;
  automationId: string;
  endpointId: string | null;
  /**
   * The address it is expected to go to, when known: a job of a saturated destination (its
   * normalised origin) is then postponed before it reads the database. Only a hint: the attempt
   * takes its slot at the destination it actually resolves.
   */
  url: string | null;
  /** When the first attempt is due (the action's delay); null or past: now. */
  nextAttemptAt: Date | null;
  /** Sent in order: the delivery whose first attempt this one's waits for, and the one it wakes. */
  after?: string;
  next?: string;
}

/** docs/operations.md "Bull Board": `<event type> → <endpoint host>`, so that an operator sees what a job is about. */
export function deliveryJobName(d: Pick<DeliveryToEnqueue, 'eventType' | 'url'>): string {
  let host = "the venue's endpoint";
  try {
    if (d.url) host = new URL(d.url).host;
  } catch {
    // An address the attempt will refuse; the job is still named after its event.
  }
  return `${d.eventType} → ${host}`;
}

/**
 * jobId = delivery id, so enqueueing twice is harmless. Of the deliveries due now, only the first
 * few per destination are sent to the workers at once; the others are enqueued already postponed,
 * behind the destination's waiting jobs (DestinationSlots.holdBack): the release of a slot wakes them in
 * order, their delay (about their turn) is the fallback.
 */
export async function enqueueDeliveries(deliveries: DeliveryToEnqueue[]): Promise<void> {
  if (!deliveries.length) return;
  const now = Date.now();
  const dueIn = (d: DeliveryToEnqueue) => Math.max(0, (d.nextAttemptAt?.getTime() ?? now) - now);
  const destinationOfDelivery = new Map(deliveries.map((d) => [d.id, destinationOf(d.url ?? '')]));
  const dueNow = deliveries.filter((d) => destinationOfDelivery.get(d.id) && dueIn(d) === 0);
  const byDestination = new Map([...groupBy(dueNow, (d) => destinationOfDelivery.get(d.id)!)].map(([destination, list]) => [destination, list.map((d) => d.id)]));
  const heldBack = await DestinationSlots.holdBack(getQueueConnection(), byDestination, { prefix: config.QUEUE_PREFIX, limit: config.WEBHOOK_DESTINATION_CONCURRENCY });
  // Only the jobs that go to the workers now take a place in the line; those enqueued delayed run
  // behind it when they come back (src/queues/fair-share.ts).
  const inLine = deliveries.filter((d) => !heldBack.delays.has(d.id) && dueIn(d) === 0);
  const tags = await takeFairPrioritiesOf(webhookDeliveryJob.queueName, inLine, (d) => d.organisationId);
  const priorities = new Map(inLine.map((d, i) => [d.id, tags[i]]));
  await getQueue(webhookDeliveryJob.queueName).addBulk(
    deliveries.map((d) => {
      const destination = destinationOfDelivery.get(d.id);
      const ids = { organisationId: d.organisationId, venueId: d.venueId, eventId: d.eventId, endpointId: d.endpointId, automationId: d.automationId };
      return {
        name: deliveryJobName(d),
        // Fields left undefined are not written (JSON).
        data: { deliveryId: d.id, ...(destination ? { destination } : {}), ...ids, after: d.after, next: d.next } satisfies WebhookDeliveryJob,
        opts: { ...webhookDeliveryJob.jobOptions, jobId: d.id, delay: heldBack.delays.get(d.id) ?? dueIn(d), priority: priorities.get(d.id) ?? behindTheLine },
      };
    }),
  );
  await heldBack.enlist();
}

/** Moves a postponed (delayed) delivery job to the waiting list now; false when it is not delayed, or not there. */
export async function promoteDeliveryJob(id: string): Promise<boolean> {
  const job = await getQueue(webhookDeliveryJob.queueName).getJob(id);
  return job ? job.promote().then(() => true, () => false) : false;
}

/** Removes waiting or delayed jobs; a job being attempted right now is left to notice the row's state. */
export async function removeDeliveryJobs(ids: string[]): Promise<void> {
  const queue = getQueue(webhookDeliveryJob.queueName);
  await Promise.all(ids.map((id) => queue.remove(id)));
}

/** Best effort after the commit that annulled these deliveries: a job left behind finds its row discarded and sends nothing. */
export function dropAnnulledJobs(ids: string[], log: Logger): void {
  if (!ids.length) return;
  removeDeliveryJobs(ids).catch((err: unknown) => log.warn({ err: (err as Error).message, count: ids.length }, 'annulled delivery jobs not removed'));
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
