import { and, eq, isNotNull, sql } from 'drizzle-orm';
import type { Logger } from 'pino';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { organisations, webhookEndpoints } from '../../db/schema/index.js';
import type { OperatorEventType } from '../../lib/event-catalogue.js';
import { logger } from '../../logger.js';
import { systemActor, transactionWithEvents, type Emit } from '../outbox/outbox.js';
import { dropAnnulledJobs } from '../../jobs/webhook-delivery-job.js';
import { annulPendingDeliveries, failingTooLong, type EndpointHealthThresholds } from './delivery-state.js';
import { webhookEndpointJson, type WebhookEndpointRow } from './webhook-endpoint-json.js';

/** An operator event about a destination: its data is the destination as GET returns it. */
async function emitEndpointEvent(tx: Tx, emit: Emit, type: OperatorEventType, endpoint: WebhookEndpointRow): Promise<void> {
  const [organisation] = await tx
    .select({ isTest: organisations.isTest })
    .from(organisations)
    .where(eq(organisations.id, endpoint.organisationId));
  emit({
    organisationId: endpoint.organisationId,
    venueId: endpoint.venueId,
    livemode: !organisation?.isTest,
    type,
    subjectType: 'none',
    subjectId: null,
    data: { webhookEndpoint: webhookEndpointJson(endpoint) },
  });
}

/**
 * Disables a destination that has failed long enough (docs/webhooks.md "Endpoint health"), once:
 * the UPDATE is conditional on the thresholds and on the destination still being active, so of
 * concurrent attempts that all saw it due, one disables it. In the same transaction it emits
 * `webhook_endpoint_disabled` and discards the deliveries waiting for an attempt there
 * (`endpoint_disabled`); their jobs are removed after the commit. True when this call disabled it.
 */
export async function disableFailingEndpoint(endpointId: string, health: EndpointHealthThresholds, log: Logger = logger): Promise<boolean> {
  const discarded = await transactionWithEvents(
    systemActor('worker-webhooks'),
    async (tx, emit) => {
      const [endpoint] = await tx
        .update(webhookEndpoints)
        .set({ isActive: false, disabledAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(webhookEndpoints.updatedAt) })
        .where(and(eq(webhookEndpoints.id, endpointId), failingTooLong(health.failures, health.minutes)))
        .returning();
      if (!endpoint) return null;
      await emitEndpointEvent(tx, emit, 'webhook_endpoint_disabled', endpoint);
      return annulPendingDeliveries({ endpointId }, tx);
    },
    log,
  );
  if (!discarded) return false;
  log.warn({ endpointId, discarded: discarded.length }, 'webhook endpoint disabled after failing too long');
  dropAnnulledJobs(discarded, log);
  return true;
}

/**
 * Turns a disabled destination back on, in the caller's transaction: active, health reset (the
 * streak and disabledAt cleared, lastSuccessAt kept), `webhook_endpoint_enabled` emitted. Only a
 * destination that is disabled matches, so two concurrent calls emit one event. Nothing discarded
 * is sent again. Null when it was not disabled.
 */
export async function enableDisabledEndpoint(tx: Tx, emit: Emit, endpointId: string): Promise<WebhookEndpointRow | null> {
  const [endpoint] = await tx
    .update(webhookEndpoints)
    .set({
      isActive: true,
      consecutiveFailures: 0,
      failingSince: null,
      disabledAt: null,
      updatedAt: nextUpdatedAt(webhookEndpoints.updatedAt),
    })
    .where(and(eq(webhookEndpoints.id, endpointId), isNotNull(webhookEndpoints.disabledAt)))
    .returning();
  if (!endpoint) return null;
  await emitEndpointEvent(tx, emit, 'webhook_endpoint_enabled', endpoint);
  return endpoint;
}
