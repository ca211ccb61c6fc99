import { and, asc, eq, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { webhookDeliveries } from '../../db/schema/index.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import { enqueueDeliveries } from './delivery-queue.js';

const overdueAfterSeconds = 60;
const batchSize = 500;

/**
 * PostgreSQL is the truth for deliveries too: a pending delivery overdue by a minute whose job Redis
 * no longer has (Redis lost data, a redelivery not enqueued) is enqueued again; one whose job ended
 * without concluding the row (the database was down during its attempts) gets a fresh job.
 * Waiting, delayed and active jobs are left alone.
 */
export async function sweepDeliveries(): Promise<number> {
  const overdue = await db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.status, 'pending'),
        lt(webhookDeliveries.nextAttemptAt, sql`clock_timestamp() - make_interval(secs => ${overdueAfterSeconds})`),
      ),
    )
    .orderBy(asc(webhookDeliveries.nextAttemptAt))
    .limit(batchSize);
  const queue = getQueue(queueNames.webhookDelivery);
  let requeued = 0;
  for (const { id } of overdue) {
    const job = await queue.getJob(id);
    if (job) {
      const state = await job.getState();
      if (state !== 'failed' && state !== 'completed') continue;
      await job.remove();
    }
    await enqueueDeliveries([{ id, nextAttemptAt: null }]);
    requeued++;
  }
  return requeued;
}
