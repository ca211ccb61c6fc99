import { and, asc, isNull, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import { sweepDeliveries } from '../webhooks/sweep-deliveries.js';

const sweepAfterSeconds = 30;
const batchSize = 500;

/**
 * Re-enqueues events that are still undispatched 30 s after their commit (Redis was down, or the
 * process died between commit and enqueue). A job that exists but failed is retried; a job that
 * exists and waits is left alone (same jobId).
 */
export async function sweepOutbox(): Promise<number> {
  const stale = await db
    .select({ id: events.id })
    .from(events)
    .where(and(isNull(events.dispatchedAt), lt(events.createdAt, sql`clock_timestamp() - make_interval(secs => ${sweepAfterSeconds})`)))
    .orderBy(asc(events.createdAt))
    .limit(batchSize);
  const queue = getQueue(queueNames.events);
  for (const { id } of stale) {
    const job = await queue.getJob(id);
    if (!job) {
      await queue.add('event', { eventId: id }, { jobId: id });
    } else if (await job.isFailed()) {
      await job.retry();
    } else if (await job.isCompleted()) {
      // Completed but not marked (crash between processing and marking): run it again.
      await job.remove();
      await queue.add('event', { eventId: id }, { jobId: id });
    }
  }
  // Webhook deliveries are swept on the same beat: their rows are an outbox of their own.
  return stale.length + (await sweepDeliveries());
}
