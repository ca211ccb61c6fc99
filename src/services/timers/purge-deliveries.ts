import { and, inArray, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { webhookDeliveries } from '../../db/schema/index.js';

export const concludedDeliveryRetentionDays = 30;
const batchSize = 1000;

/**
 * Daily: deletes the deliveries concluded (delivered or discarded) more than 30 days ago, in
 * batches so that no statement holds many locks. A concluded row is written for the last time when
 * it concludes, so updatedAt is its conclusion time. Pending deliveries are never touched.
 */
/** Delivered or discarded more than 30 days ago (the partial index webhook_deliveries_concluded_idx reads only these). */
export const concludedLongAgo = and(
  inArray(webhookDeliveries.status, ['delivered', 'discarded']),
  lt(webhookDeliveries.updatedAt, sql`statement_timestamp() - make_interval(days => ${concludedDeliveryRetentionDays})`),
);

export async function purgeConcludedDeliveries(): Promise<number> {
  let total = 0;
  for (;;) {
    // Repeated on the DELETE itself: a delivery redelivered meanwhile (pending again) is re-checked and kept.
    const expired = db().select({ id: webhookDeliveries.id }).from(webhookDeliveries).where(concludedLongAgo).limit(batchSize);
    const deleted = await db()
      .delete(webhookDeliveries)
      .where(and(inArray(webhookDeliveries.id, expired), concludedLongAgo))
      .returning({ id: webhookDeliveries.id });
    total += deleted.length;
    if (deleted.length < batchSize) return total;
  }
}
