import { and, eq, type SQL } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { webhookDeliveries } from '../../db/schema/index.js';
import { canSeeVenue, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import type { DeliveryRow } from './delivery-json.js';
import { clearFinishedDeliveryJob, enqueueDeliveries } from './delivery-queue.js';
import { reopenDelivery } from './delivery-state.js';

export interface DeliveryFilters {
  venueId?: string;
  status?: DeliveryRow['status'];
  eventType?: string;
  automationId?: string;
  endpointId?: string;
}

export async function listDeliveries(auth: AuthContext, query: ListQuery & DeliveryFilters) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  const filters: Array<SQL | undefined> = [
    eq(webhookDeliveries.organisationId, auth.organisationId),
    visibleVenueIds(auth, webhookDeliveries.venueId),
    query.venueId ? eq(webhookDeliveries.venueId, query.venueId) : undefined,
    query.status ? eq(webhookDeliveries.status, query.status) : undefined,
    query.eventType ? eq(webhookDeliveries.eventType, query.eventType) : undefined,
    query.automationId ? eq(webhookDeliveries.automationId, query.automationId) : undefined,
    query.endpointId ? eq(webhookDeliveries.endpointId, query.endpointId) : undefined,
  ];
  return fetchPage<DeliveryRow>({
    query,
    idColumn: webhookDeliveries.id,
    naturalOrder: [{ column: webhookDeliveries.createdAt, kind: 'instant', read: (d) => d.createdAt }],
    updatedAt: { column: webhookDeliveries.updatedAt, kind: 'instant', read: (d) => d.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db
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
  const [row] = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(column, idOrKey), eq(webhookDeliveries.organisationId, auth.organisationId)));
  if (!row || !canSeeVenue(auth, row.venueId)) throw ApiError.notFound('Webhook delivery');
  return row;
}

const stillPending = () => new ApiError('conflict', 'The delivery is still pending; it can be redelivered once concluded.', { reason: 'delivery_pending' });

/**
 * A new cycle of five attempts for a concluded delivery: same idempotency key, body and destination.
 * The row is reopened first (only one of two concurrent calls wins); should Redis fail afterwards,
 * the delivery sweeper enqueues the pending row.
 */
export async function redeliver(auth: AuthContext, idOrKey: string, log: Logger = logger): Promise<DeliveryRow> {
  const delivery = await getVisibleDelivery(auth, idOrKey);
  if (delivery.status === 'pending') throw stillPending();
  // The last attempt may still be finishing (its row already concluded): that job id is not free yet.
  if (!(await clearFinishedDeliveryJob(delivery.id))) throw stillPending();
  const reopened = await reopenDelivery(delivery.id);
  if (!reopened) throw stillPending();
  await enqueueDeliveries([{ ...reopened, nextAttemptAt: null }]).catch((err: unknown) =>
    log.warn({ err: (err as Error).message, deliveryId: reopened.id }, 'redelivery not enqueued; the delivery sweeper will'),
  );
  return reopened;
}
