import { and, asc, between, eq, getTableColumns, type SQL } from 'drizzle-orm';
import { db, transaction, type DbOrTx } from '../../db/client.js';
import { events, webhookDeliveries, webhookDeliveryAttempts, webhookRecoveries } from '../../db/schema/index.js';
import { canSeeVenue, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import { mapInChunks } from '../../lib/chunks.js';
import type { AttemptRow, DeliveryRow } from './delivery-json.js';
import { clearFinishedDeliveryJob, clearFinishedDeliveryJobs } from '../../jobs/webhook-delivery-job.js';
import { enqueueDeliveries, type DeliveryQueueSettings } from './enqueue-deliveries.js';
import { reopenDeliveries } from './delivery-state.js';
import type { WebhookEndpointRow } from './webhook-endpoint-json.js';
import { getVisibleEndpoint } from './webhook-endpoint-service.js';

export interface DeliveryFilters {
  venueId?: string;
  status?: DeliveryRow['status'];
  eventType?: string;
  automationId?: string;
  endpointId?: string;
}

/** The conditions of GET /webhook-deliveries (the key's visibility included); exported for the plan test. */
export function deliveryListFilters(auth: AuthContext, query: DeliveryFilters): Array<SQL | undefined> {
  return [
    eq(webhookDeliveries.organisationId, auth.organisationId),
    visibleVenueIds(auth, webhookDeliveries.venueId),
    query.venueId ? eq(webhookDeliveries.venueId, query.venueId) : undefined,
    query.status ? eq(webhookDeliveries.status, query.status) : undefined,
    query.eventType ? eq(webhookDeliveries.eventType, query.eventType) : undefined,
    query.automationId ? eq(webhookDeliveries.automationId, query.automationId) : undefined,
    query.endpointId ? eq(webhookDeliveries.endpointId, query.endpointId) : undefined,
  ];
}

export async function listDeliveries(auth: AuthContext, query: ListQuery & DeliveryFilters) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  const filters = deliveryListFilters(auth, query);
  return fetchPage<DeliveryRow>({
    query,
    idColumn: webhookDeliveries.id,
    naturalOrder: [{ column: webhookDeliveries.createdAt, kind: 'instant', read: (d) => d.createdAt }],
    updatedAt: { column: webhookDeliveries.updatedAt, kind: 'instant', read: (d) => d.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(webhookDeliveries)
        .where(and(...filters, keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/** By record id or by its idempotency key (`automation:<runId>:<n>`, the envelope id). */
export async function getVisibleDelivery(auth: AuthContext, idOrKey: string): Promise<DeliveryRow> {
  const column = idOrKey.startsWith('automation:') ? webhookDeliveries.idempotencyKey : webhookDeliveries.id;
  const [row] = await db()
    .select()
    .from(webhookDeliveries)
    .where(and(eq(column, idOrKey), eq(webhookDeliveries.organisationId, auth.organisationId)));
  if (!row || !canSeeVenue(auth, row.venueId)) throw ApiError.notFound('Webhook delivery');
  return row;
}

const stillPending = () =>
  new ApiError('conflict', 'The delivery is still pending; it can be redelivered once concluded.', { reason: 'delivery_pending' });

/**
 * Enqueues the first attempt of each reopened delivery; should Redis fail, the delivery sweeper
 * enqueues the pending rows. `inOrder`: each first attempt waits for the outcome of the previous
 * one's, which wakes it; the delays (a second apart) only bring a job back should its wake-up be lost.
 */
async function enqueueNewCycles(reopened: DeliveryRow[], settings: DeliveryQueueSettings, log: Logger, inOrder = false): Promise<void> {
  const now = Date.now();
  await enqueueDeliveries(
    reopened.map((d, i) => ({
      ...d,
      nextAttemptAt: inOrder ? new Date(now + i * orderedFallbackSpacingMs) : null,
      ...(inOrder ? { after: reopened[i - 1]?.id, next: reopened[i + 1]?.id } : {}),
    })),
    settings,
  ).catch((err: unknown) =>
    log.warn({ err: (err as Error).message, deliveries: reopened.length }, 'redelivery not enqueued; the delivery sweeper will'),
  );
}

const orderedFallbackSpacingMs = 1000;

/**
 * A new cycle of five attempts for a concluded delivery: same idempotency key, body and destination.
 * The row is reopened first (only one of two concurrent calls wins).
 */
export async function redeliver(
  auth: AuthContext,
  idOrKey: string,
  settings: DeliveryQueueSettings,
  log: Logger = logger,
): Promise<DeliveryRow> {
  const delivery = await getVisibleDelivery(auth, idOrKey);
  if (delivery.status === 'pending') throw stillPending();
  // The last attempt may still be finishing (its row already concluded): that job id is not free yet.
  if (!(await clearFinishedDeliveryJob(delivery.id))) throw stillPending();
  const [reopened] = await reopenDeliveries([delivery.id], 'concluded');
  if (!reopened) throw stillPending();
  await enqueueNewCycles([reopened], settings, log);
  return reopened;
}

/** How far back a recovery may reach: well within the 30 days a concluded delivery is kept. */
export const recoveryWindowDays = 14;

/** The destination, refused when it is not active: its deliveries would only fail again. */
async function getRecoverableEndpoint(auth: AuthContext, endpointId: string, conn: DbOrTx = db()): Promise<WebhookEndpointRow> {
  const endpoint = await getVisibleEndpoint(auth, endpointId, conn, conn !== db());
  if (!endpoint.isActive) {
    throw new ApiError(
      'conflict',
      'The webhook endpoint is disabled; turn it on (PATCH isActive: true) before recovering its deliveries.',
      { reason: 'endpoint_disabled' },
    );
  }
  return endpoint;
}

/**
 * POST /webhook-endpoints/{id}/recover: every delivery of the destination created in [since, until]
 * that was discarded starts a new cycle of five attempts, as a redelivery does, sent in the order of
 * the events' creation. The rows are reopened in one transaction, in bounded chunks, under a share
 * lock of the destination (a concurrent disabling waits, then discards them); a delivery whose last
 * attempt is still finishing is left out. Recorded in webhook_recoveries.
 */
export async function recoverDeliveries(
  auth: AuthContext,
  endpointId: string,
  window: { since: Date; until: Date },
  settings: DeliveryQueueSettings,
  log: Logger = logger,
) {
  const endpoint = await getRecoverableEndpoint(auth, endpointId);
  const candidates = await db()
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .where(
      and(
        eq(webhookDeliveries.endpointId, endpoint.id),
        eq(webhookDeliveries.status, 'discarded'),
        between(webhookDeliveries.createdAt, window.since, window.until),
      ),
    )
    .orderBy(asc(events.createdAt), asc(events.id), asc(webhookDeliveries.id));
  const free = await clearFinishedDeliveryJobs(candidates.map((c) => c.id));
  const { recovery, reopened } = await transaction(async (tx) => {
    await getRecoverableEndpoint(auth, endpoint.id, tx);
    const rows = await mapInChunks(free, (chunk) => reopenDeliveries(chunk, 'discarded', tx));
    const [recovery] = await tx
      .insert(webhookRecoveries)
      .values({
        organisationId: endpoint.organisationId,
        endpointId: endpoint.id,
        since: window.since,
        until: window.until,
        deliveries: rows.length,
      })
      .returning();
    return { recovery, reopened: rows };
  }, auth.signal);
  const rank = new Map(free.map((id, i) => [id, i]));
  await enqueueNewCycles(
    reopened.sort((a, b) => rank.get(a.id)! - rank.get(b.id)!),
    settings,
    log,
    true,
  );
  return recovery;
}

/**
 * The attempt log of a delivery, oldest first, over every cycle. Keyset on (attempt, deliveryId):
 * one delivery, so the attempt alone orders the rows. Attempts never change, so changedAfter reads
 * startedAt (as GET /events reads createdAt).
 */
export async function listAttempts(auth: AuthContext, idOrKey: string, query: ListQuery) {
  const delivery = await getVisibleDelivery(auth, idOrKey);
  return fetchPage<AttemptRow & { id: string }>({
    query,
    idColumn: webhookDeliveryAttempts.deliveryId,
    naturalOrder: [{ column: webhookDeliveryAttempts.attempt, kind: 'number', read: (a) => a.attempt }],
    updatedAt: { column: webhookDeliveryAttempts.startedAt, kind: 'instant', read: (a) => a.startedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select({ id: webhookDeliveryAttempts.deliveryId, ...getTableColumns(webhookDeliveryAttempts) })
        .from(webhookDeliveryAttempts)
        .where(and(eq(webhookDeliveryAttempts.deliveryId, delivery.id), keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}
