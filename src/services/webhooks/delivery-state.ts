import { and, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { automations, events, guests, organisationWebhookSecrets, reservations, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { reservationViewColumns, reservationViewGuestJoin } from '../reservations/reservation-view.js';
import type { DeliveryRow } from './delivery-json.js';

/**
 * Every change of a delivery row's state. Each update is conditional on the state it expects, so a
 * concurrent annulment, redelivery or duplicate job changes nothing it should not.
 */

const bump = () => ({ updatedAt: nextUpdatedAt(webhookDeliveries.updatedAt) });

// Prepared once: these run for every attempt, and building a statement is most of its cost.
const contextStatement = db
  .select({
    delivery: {
      id: webhookDeliveries.id,
      organisationId: webhookDeliveries.organisationId,
      venueId: webhookDeliveries.venueId,
      runId: webhookDeliveries.runId,
      idempotencyKey: webhookDeliveries.idempotencyKey,
      destination: webhookDeliveries.destination,
      endpointId: webhookDeliveries.endpointId,
      url: webhookDeliveries.url,
      status: webhookDeliveries.status,
      payload: webhookDeliveries.payload,
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
    ...reservationViewColumns,
  })
  .from(webhookDeliveries)
  .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
  .innerJoin(automations, eq(automations.id, webhookDeliveries.automationId))
  .leftJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
  .leftJoin(organisationWebhookSecrets, eq(organisationWebhookSecrets.organisationId, webhookDeliveries.organisationId))
  // The current state of a reservation whose body is still to be built, in the same round trip.
  .leftJoin(reservations, and(isNull(webhookDeliveries.payload), eq(events.subjectType, 'reservation'), eq(reservations.id, events.subjectId)))
  .leftJoin(guests, reservationViewGuestJoin)
  .where(eq(webhookDeliveries.id, sql.placeholder('id')))
  .prepare('read_webhook_delivery_context');

/**
 * Everything an attempt needs, in one round trip: the delivery (its state and stored body), the
 * event, the automation, the destination endpoint, the organisation secret and, for a reservation
 * event whose body is still to be built, the reservation view (`reservationViewOf`). Undefined when
 * the delivery does not exist.
 */
export async function readDeliveryContext(id: string) {
  const [row] = await contextStatement.execute({ id });
  return row;
}

export type DeliveryContext = NonNullable<Awaited<ReturnType<typeof readDeliveryContext>>>;

const claimStatement = db
  .update(webhookDeliveries)
  .set({
    attempts: sql`${webhookDeliveries.attempts} + 1`,
    lastAttemptAt: sql`clock_timestamp()`,
    payload: sql`coalesce(${webhookDeliveries.payload}, ${sql.placeholder('payload')}::text)`,
    ...bump(),
  })
  .where(and(eq(webhookDeliveries.id, sql.placeholder('id')), eq(webhookDeliveries.status, 'pending')))
  .returning({ attempts: webhookDeliveries.attempts, payload: webhookDeliveries.payload })
  .prepare('claim_webhook_attempt');

/**
 * Starts attempt `attempts + 1` of a pending delivery and, in the same statement, keeps the body
 * built for its first attempt: a body already stored wins and is the one returned, so every attempt
 * sends the same bytes. Counting before sending means an attempt cut short by a crash still counts.
 * Undefined when the delivery is no longer pending.
 */
export async function claimAttempt(id: string, payload: string): Promise<{ attempts: number; payload: string } | undefined> {
  const [row] = await claimStatement.execute({ id, payload });
  return row ? { attempts: row.attempts, payload: row.payload ?? payload } : undefined;
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
