import { and, eq, inArray, ne, sql } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { automations, events, organisationWebhookSecrets, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import type { DeliveryRow } from './delivery-json.js';

/**
 * Every change of a delivery row's state. Each update is conditional on the state it expects, so a
 * concurrent annulment, redelivery or duplicate job changes nothing it should not.
 */

const bump = () => ({ updatedAt: nextUpdatedAt(webhookDeliveries.updatedAt) });

const claimed = db.$with('claimed').as(
  db
    .update(webhookDeliveries)
    .set({ attempts: sql`${webhookDeliveries.attempts} + 1`, lastAttemptAt: sql`clock_timestamp()`, ...bump() })
    .where(and(eq(webhookDeliveries.id, sql.placeholder('id')), eq(webhookDeliveries.status, 'pending')))
    .returning(),
);

// Prepared once: this runs for every attempt, and building the statement is most of its cost.
const claimStatement = db
  .with(claimed)
  .select({
    delivery: {
      id: claimed.id,
      organisationId: claimed.organisationId,
      venueId: claimed.venueId,
      runId: claimed.runId,
      idempotencyKey: claimed.idempotencyKey,
      destination: claimed.destination,
      endpointId: claimed.endpointId,
      url: claimed.url,
      attempts: claimed.attempts,
      payload: claimed.payload,
    },
    event: {
      id: events.id,
      type: events.type,
      createdAt: events.createdAt,
      venueId: events.venueId,
      data: events.data,
      subjectType: events.subjectType,
      subjectId: events.subjectId,
    },
    automation: { name: automations.name },
    endpoint: webhookEndpoints,
    organisationSecret: organisationWebhookSecrets,
  })
  .from(claimed)
  .innerJoin(events, eq(events.id, claimed.eventId))
  .innerJoin(automations, eq(automations.id, claimed.automationId))
  .leftJoin(webhookEndpoints, eq(webhookEndpoints.id, claimed.endpointId))
  .leftJoin(organisationWebhookSecrets, eq(organisationWebhookSecrets.organisationId, claimed.organisationId))
  .prepare('claim_webhook_attempt');

/**
 * Starts attempt `attempts + 1` of a pending delivery and reads, in the same round trip, what the
 * attempt needs: the event, the automation, the destination endpoint and the organisation secret.
 * Counting before sending means an attempt cut short by a crash still counts. Undefined when the
 * delivery is not pending.
 */
export async function claimAttempt(id: string) {
  const [row] = await claimStatement.execute({ id });
  return row;
}

/** Keeps the body built at the first attempt; a body already stored wins and is returned. */
export async function storePayload(id: string, payload: string): Promise<string> {
  const [row] = await db
    .update(webhookDeliveries)
    .set({ payload: sql`coalesce(${webhookDeliveries.payload}, ${payload})` })
    .where(eq(webhookDeliveries.id, id))
    .returning({ payload: webhookDeliveries.payload });
  return row?.payload ?? payload;
}

export interface AttemptOutcome {
  status: number | null;
  error: string | null;
  /** The destination of the attempt, kept on the row ("same destination" for a redelivery). */
  endpointId: string | null;
  url: string | null;
}

const deliveredStatement = db
  .update(webhookDeliveries)
  .set({
    status: 'delivered',
    lastResponseStatus: sql`${sql.placeholder('status')}`,
    lastError: null,
    nextAttemptAt: null,
    discardReason: null,
    endpointId: sql`${sql.placeholder('endpointId')}`,
    url: sql`${sql.placeholder('url')}`,
    ...bump(),
  })
  .where(and(eq(webhookDeliveries.id, sql.placeholder('id')), ne(webhookDeliveries.status, 'delivered')))
  .prepare('record_webhook_delivered');

/** A 2xx answer is the truth, even if the delivery was annulled while the request was under way. */
export async function recordDelivered(id: string, outcome: AttemptOutcome): Promise<void> {
  await deliveredStatement.execute({ id, status: outcome.status, endpointId: outcome.endpointId, url: outcome.url });
}

/** A failed attempt: pending with its next moment, or discarded after the last one. False when no longer pending. */
export async function recordFailure(id: string, outcome: AttemptOutcome, nextAttemptAt: Date | null): Promise<boolean> {
  const rows = await db
    .update(webhookDeliveries)
    .set({
      lastResponseStatus: outcome.status,
      lastError: outcome.error,
      nextAttemptAt,
      endpointId: outcome.endpointId,
      url: outcome.url,
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
