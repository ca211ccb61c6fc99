import { and, asc, isNull, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import { requeueUnlessPending } from '../../queues/requeue-jobs.js';
import { sweepDeliveries } from '../webhooks/sweep-deliveries.js';
import { addEventJobs } from './outbox.js';

/** decisions §0: the process that committed an event enqueues it itself; after 30 s it is the sweeper's. */
const sweepAfterSeconds = 30;
const batchSize = 1000;

/**
 * Re-enqueues every event still undispatched 30 s after its commit (Redis was down or lost its
 * data, the process died between commit and enqueue), in batches until none is left, so a backlog
 * stranded by an outage is handed back at once rather than a batch per beat. An event whose job
 * waits or runs is left alone; one whose job ended is given a fresh job.
 */
export async function sweepOutbox(): Promise<number> {
  const queue = getQueue(queueNames.events);
  let requeued = 0;
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    const stale = await db
      .select({ id: events.id, createdAt: events.createdAt })
      .from(events)
      .where(
        and(
          isNull(events.dispatchedAt),
          lt(events.createdAt, sql`clock_timestamp() - make_interval(secs => ${sweepAfterSeconds})`),
          after ? sql`(${events.createdAt}, ${events.id}) > (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)` : undefined,
        ),
      )
      .orderBy(asc(events.createdAt), asc(events.id))
      .limit(batchSize);
    if (stale.length) requeued += await requeueUnlessPending(queue, stale.map((e) => e.id), addEventJobs);
    if (stale.length < batchSize) break;
    after = stale[stale.length - 1];
  }
  // Webhook deliveries are swept on the same beat: their rows are an outbox of their own.
  return requeued + (await sweepDeliveries());
}
