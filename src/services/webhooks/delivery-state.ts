import { and, eq, inArray, ne } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { webhookDeliveries } from '../../db/schema/index.js';
import type { DeliveryRow } from './delivery-json.js';

/**
 * Every change of a delivery row's state. Each update is conditional on the state it expects, so a
 * concurrent annulment, redelivery or duplicate job changes nothing it should not.
 */

const bump = () => ({ updatedAt: nextUpdatedAt(webhookDeliveries.updatedAt) });

/** Starts attempt `attempts + 1`; null when someone else moved the row meanwhile. */
export async function claimAttempt(
  delivery: DeliveryRow,
  fields: { payload: string; endpointId: string | null; url: string | null },
): Promise<DeliveryRow | null> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({
      attempts: delivery.attempts + 1,
      lastAttemptAt: new Date(),
      // The first body built wins; it is never rebuilt.
      payload: delivery.payload ?? fields.payload,
      endpointId: fields.endpointId,
      url: fields.url,
      ...bump(),
    })
    .where(and(eq(webhookDeliveries.id, delivery.id), eq(webhookDeliveries.status, 'pending'), eq(webhookDeliveries.attempts, delivery.attempts)))
    .returning();
  return row ?? null;
}

/** A 2xx answer is the truth, even if the delivery was annulled while the request was under way. */
export async function recordDelivered(id: string, status: number): Promise<void> {
  await db
    .update(webhookDeliveries)
    .set({ status: 'delivered', lastResponseStatus: status, lastError: null, nextAttemptAt: null, discardReason: null, ...bump() })
    .where(and(eq(webhookDeliveries.id, id), ne(webhookDeliveries.status, 'delivered')));
}

/** A failed attempt: pending with its next moment, or discarded after the last one. False when no longer pending. */
export async function recordFailure(id: string, outcome: { status: number | null; error: string }, nextAttemptAt: Date | null): Promise<boolean> {
  const rows = await db
    .update(webhookDeliveries)
    .set({
      lastResponseStatus: outcome.status,
      lastError: outcome.error,
      nextAttemptAt,
      ...(nextAttemptAt === null ? { status: 'discarded' as const, discardReason: 'max_attempts' as const } : {}),
      ...bump(),
    })
    .where(and(eq(webhookDeliveries.id, id), eq(webhookDeliveries.status, 'pending')))
    .returning({ id: webhookDeliveries.id });
  return rows.length > 0;
}

/**
 * A new cycle of attempts for a concluded delivery, same key, body and destination. `onlyExhausted`
 * limits it to deliveries discarded after their last attempt (a Bull Board retry of a failed job).
 */
export async function reopenDelivery(id: string, onlyExhausted = false, conn: DbOrTx = db): Promise<DeliveryRow | null> {
  const [row] = await conn
    .update(webhookDeliveries)
    .set({ status: 'pending', attempts: 0, discardReason: null, nextAttemptAt: new Date(), ...bump() })
    .where(
      and(
        eq(webhookDeliveries.id, id),
        onlyExhausted
          ? and(eq(webhookDeliveries.status, 'discarded'), eq(webhookDeliveries.discardReason, 'max_attempts'))
          : inArray(webhookDeliveries.status, ['delivered', 'discarded']),
      ),
    )
    .returning();
  return row ?? null;
}

/** Deactivating or archiving an automation annuls its deliveries that wait for an attempt. */
export async function annulPendingDeliveries(automationId: string, conn: DbOrTx): Promise<string[]> {
  const rows = await conn
    .update(webhookDeliveries)
    .set({ status: 'discarded', discardReason: 'automation_inactive', nextAttemptAt: null, ...bump() })
    .where(and(eq(webhookDeliveries.automationId, automationId), eq(webhookDeliveries.status, 'pending')))
    .returning({ id: webhookDeliveries.id });
  return rows.map((r) => r.id);
}
