import { and, asc, eq } from 'drizzle-orm';
import { db, transaction, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { webhookEndpoints } from '../../db/schema/index.js';
import { canSeeVenue, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { actorOf, transactionWithEvents } from '../outbox/outbox.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { enableDisabledEndpoint } from './endpoint-health.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import { handOutSecretOnce, openHandedOutSecret, type SecretIdempotency } from './secret-handout.js';
import type { SigningSecretBox } from './signing-secrets.js';
import type { WebhookEndpointRow } from './webhook-endpoint-json.js';
import type { SignatureScheme } from '../../lib/webhook-signature.js';

/** The endpoint if it belongs to the key's organisation and a venue the key may see; 404 otherwise. `forShare`: in a transaction, lock it against changes. */
export async function getVisibleEndpoint(
  auth: AuthContext,
  endpointId: string,
  conn: DbOrTx = db(),
  forShare = false,
): Promise<WebhookEndpointRow> {
  const query = conn
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.organisationId, auth.organisationId)));
  const [row] = forShare ? await query.for('share') : await query;
  if (!row || !canSeeVenue(auth, row.venueId)) throw ApiError.notFound('Webhook endpoint');
  return row;
}

/** The venue's main destination: the first registered one (docs/webhooks.md). */
export async function getMainEndpoint(venueId: string, conn: DbOrTx = db()): Promise<WebhookEndpointRow | null> {
  const [row] = await conn
    .select()
    .from(webhookEndpoints)
    .where(eq(webhookEndpoints.venueId, venueId))
    .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
    .limit(1);
  return row ?? null;
}

/**
 * Registers a destination with secret version 1 (sealed by `secrets`), returned once in plain text;
 * with the same Idempotency-Key, the same destination and secret while that secret is still current.
 */
export async function createEndpoint(
  auth: AuthContext,
  input: { venueId: string; url: string; signatureScheme?: SignatureScheme },
  secrets: SigningSecretBox,
  idempotency?: SecretIdempotency,
) {
  const signatureScheme = input.signatureScheme ?? 'service-v1';
  const venue = await getVisibleVenue(auth, input.venueId);
  return handOutSecretOnce(
    auth,
    idempotency,
    (remember) =>
      transaction(async (tx) => {
        const { secret, sealed } = secrets.sealNew(signatureScheme);
        const [endpoint] = await tx
          .insert(webhookEndpoints)
          .values({
            organisationId: venue.organisationId,
            venueId: venue.id,
            url: input.url,
            signatureScheme,
            currentSecret: sealed,
            secretVersion: 1,
            previousSecretExpiresAt: new Date(),
          })
          .returning();
        await remember?.(tx, {
          endpointId: endpoint.id,
          secretVersion: 1,
          sealed,
          previousSecretExpiresAt: endpoint.previousSecretExpiresAt,
        });
        return { endpoint, secret };
      }, auth.signal),
    async (record) => {
      const [endpoint] = await db()
        .select()
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.id, record.endpointId ?? ''));
      return { endpoint, secret: openHandedOutSecret(record, endpoint?.secretVersion ?? null, secrets) };
    },
  );
}

export async function listEndpoints(auth: AuthContext, query: ListQuery & { venueId?: string }) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  return fetchPage<WebhookEndpointRow>({
    query,
    idColumn: webhookEndpoints.id,
    naturalOrder: [{ column: webhookEndpoints.createdAt, kind: 'instant', read: (e) => e.createdAt }],
    updatedAt: { column: webhookEndpoints.updatedAt, kind: 'instant', read: (e) => e.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(webhookEndpoints)
        .where(
          and(
            eq(webhookEndpoints.organisationId, auth.organisationId),
            visibleVenueIds(auth, webhookEndpoints.venueId),
            query.venueId ? eq(webhookEndpoints.venueId, query.venueId) : undefined,
            keyset,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/**
 * Changes the address or turns the destination on or off. Turning on a destination the platform
 * disabled also resets its health and emits `webhook_endpoint_enabled` (docs/webhooks.md "Endpoint health").
 */
export async function updateEndpoint(
  auth: AuthContext,
  endpointId: string,
  patch: { url?: string; isActive?: boolean },
  log: Logger = logger,
): Promise<WebhookEndpointRow> {
  const existing = await getVisibleEndpoint(auth, endpointId);
  if (patch.url === undefined && patch.isActive === undefined) return existing;
  return transactionWithEvents(
    actorOf(auth),
    async (tx, emit) => {
      const [endpoint] = await tx
        .update(webhookEndpoints)
        .set({ ...patch, updatedAt: nextUpdatedAt(webhookEndpoints.updatedAt) })
        .where(eq(webhookEndpoints.id, existing.id))
        .returning();
      if (!endpoint) throw ApiError.notFound('Webhook endpoint');
      return (patch.isActive && (await enableDisabledEndpoint(tx, emit, endpoint.id))) || endpoint;
    },
    log,
    auth.signal,
  );
}

/** Deletes the destination; deliveries still aimed at it fail with a clear lastError. */
export async function deleteEndpoint(auth: AuthContext, endpointId: string): Promise<void> {
  const existing = await getVisibleEndpoint(auth, endpointId);
  await db().delete(webhookEndpoints).where(eq(webhookEndpoints.id, existing.id));
}
