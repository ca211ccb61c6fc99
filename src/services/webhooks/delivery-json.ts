import type { webhookDeliveries } from '../../db/schema/index.js';
import { hasScope, type AuthContext } from '../../http/auth.js';
import { filterEnvelopeForReader } from '../../lib/webhook-payload-filter.js';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The delivery record of decisions §12, its envelope filtered by the reader's scopes. */
export function deliveryJson(d: DeliveryRow, auth: AuthContext) {
  const reader = { guests: hasScope(auth, 'guests:read'), reservations: hasScope(auth, 'reservations:read') || hasScope(auth, 'events:read') };
  return {
    id: d.id,
    idempotencyKey: d.idempotencyKey,
    eventId: d.eventId,
    eventType: d.eventType,
    venueId: d.venueId,
    automationId: d.automationId,
    runId: d.runId,
    endpointId: d.endpointId,
    url: d.url,
    status: d.status,
    attempts: d.attempts,
    nextAttemptAt: iso(d.nextAttemptAt),
    lastAttemptAt: iso(d.lastAttemptAt),
    lastResponseStatus: d.lastResponseStatus,
    lastError: d.lastError,
    discardReason: d.discardReason,
    createdAt: d.createdAt.toISOString(),
    updatedAt: d.updatedAt.toISOString(),
    payload: d.payload === null ? null : filterEnvelopeForReader(JSON.parse(d.payload) as Record<string, unknown>, reader),
  };
}
