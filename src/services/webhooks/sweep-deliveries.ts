import { and, asc, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { webhookDeliveries } from '../../db/schema/index.js';
import type { Queue } from 'bullmq';
import { behindTheLine, takeFairPrioritiesOf } from '../../queues/fair-share.js';
import { getQueue } from '../../queues/queues.js';
import { requeueUnlessPending } from '../../queues/requeue-jobs.js';
import { webhookDeliveryJob } from '../../jobs/webhook-delivery-job.js';
import { enqueueDeliveries, type DeliveryQueueSettings } from './enqueue-deliveries.js';

/**
 * As for events (docs/architecture.md), 30 s: longer than any attempt in flight (10 s), so a row whose job
 * Redis lost while a worker was posting it is not sent twice while that attempt is still under way.
 */
export const deliveryOverdueAfterSeconds = 30;
const batchSize = 1000;

const overdue = sql`statement_timestamp() - make_interval(secs => ${deliveryOverdueAfterSeconds})`;

/**
 * PostgreSQL is the truth for deliveries too: every pending delivery overdue by 30 s, and not
 * attempted in the last 30 s, whose job Redis no longer has (Redis lost data, a redelivery not
 * enqueued) is enqueued again; one whose job ended without concluding the row (the database was
 * down during its attempts) gets a fresh job. Waiting, delayed and active jobs are left alone.
 * Batches follow each other until none is left, so an outage's backlog is handed back at once.
 */
export async function sweepDeliveries(settings: DeliveryQueueSettings): Promise<number> {
  const queue = getQueue(webhookDeliveryJob.queueName);
  let requeued = 0;
  let after: { nextAttemptAt: Date | null; id: string } | undefined;
  for (;;) {
    // What a job is made of, not the stored envelope: up to a thousand rows per batch.
    const rows = await db()
      .select({
        id: webhookDeliveries.id,
        organisationId: webhookDeliveries.organisationId,
        venueId: webhookDeliveries.venueId,
        eventId: webhookDeliveries.eventId,
        eventType: webhookDeliveries.eventType,
        automationId: webhookDeliveries.automationId,
        endpointId: webhookDeliveries.endpointId,
        url: webhookDeliveries.url,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
      })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.status, 'pending'),
          lt(webhookDeliveries.nextAttemptAt, overdue),
          or(isNull(webhookDeliveries.lastAttemptAt), lt(webhookDeliveries.lastAttemptAt, overdue)),
          after
            ? sql`(${webhookDeliveries.nextAttemptAt}, ${webhookDeliveries.id}) > (${after.nextAttemptAt?.toISOString()}::timestamptz, ${after.id}::uuid)`
            : undefined,
        ),
      )
      .orderBy(asc(webhookDeliveries.nextAttemptAt), asc(webhookDeliveries.id))
      .limit(batchSize);
    if (rows.length) {
      requeued += await requeueUnlessPending(queue, rows, (toAdd) =>
        enqueueDeliveries(
          toAdd.map((d) => ({ ...d, nextAttemptAt: null })),
          settings,
        ),
      );
      await bringForwardFromBehindTheLine(queue, rows);
    }
    if (rows.length < batchSize) break;
    after = rows[rows.length - 1];
  }
  return requeued;
}

/**
 * A delivery back from the delayed set waits behind the line (src/queues/fair-share.ts): after every
 * job tagged in the meantime. In a queue that never empties (other organisations' work arriving as
 * fast as it is done) it would wait for good, and its job exists, so the requeue above leaves it
 * alone. Overdue by 30 s, it takes a fresh place in the line instead, in its organisation's turn: the
 * wait behind the line is bounded by the sweep's period.
 */
async function bringForwardFromBehindTheLine(queue: Queue, rows: readonly { id: string; organisationId: string }[]): Promise<void> {
  const jobs = await Promise.all(rows.map((row) => queue.getJob(row.id)));
  const waiting = await Promise.all(
    jobs.map(async (job) => (job && Number(job.priority) === behindTheLine && (await job.getState()) === 'prioritized' ? job : null)),
  );
  const behind = rows.flatMap((row, i) => (waiting[i] ? [{ row, job: waiting[i] }] : []));
  if (!behind.length) return;
  const tags = await takeFairPrioritiesOf(webhookDeliveryJob.queueName, behind, ({ row }) => row.organisationId);
  await Promise.all(behind.map(({ job }, i) => job.changePriority({ priority: tags[i] }).catch(() => {})));
}
