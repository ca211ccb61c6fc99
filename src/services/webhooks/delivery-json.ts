import { z } from 'zod';
import { deliveryStatuses, discardReasons, type webhookDeliveries } from '../../db/schema/index.js';
import { hasScope, type AuthContext } from '../../core/auth-context.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { eventTypes } from '../../lib/event-catalogue.js';
import { reservationSchema } from '../reservations/reservation-json.js';
import { eventDataGroups } from '../events/event-service.js';
import { envelopeSchemaFor } from './envelope.js';
import { filterEnvelopeForReader } from '../../lib/webhook-payload-filter.js';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const idOnly = z.object({ id: uuid.nullable() });

/**
 * The stored envelope as a reader sees it (filterEnvelopeForReader): without guests:read the guest
 * data is reduced to its id, without reservations:read and events:read the reservation is null.
 */
const filteredData = z.union([
  z.object({
    reservation: reservationSchema.extend({ guest: reservationSchema.shape.guest.or(idOnly.nullable()), guestDetails: reservationSchema.shape.guestDetails.or(idOnly.nullable()) }).nullable(),
  }),
  ...eventDataGroups.slice(1).map((g) => g.data),
  z.object({ guest: idOnly, reason: z.string() }),
]);

export const deliverySchema = component(
  'WebhookDelivery',
  z.object({
    id: uuid,
    idempotencyKey: z.string().describe('The envelope id, sent as X-Service-Idempotency-Key.'),
    eventId: uuid,
    eventType: z.enum(eventTypes),
    venueId: uuid,
    automationId: uuid,
    runId: uuid,
    endpointId: uuid.nullable(),
    url: z.string(),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int().min(0),
    nextAttemptAt: instant.nullable(),
    lastAttemptAt: instant.nullable(),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    discardReason: z.enum(discardReasons).nullable(),
    createdAt: instant,
    updatedAt: instant,
    payload: envelopeSchemaFor(eventTypes, filteredData).nullable().describe('The envelope as sent (null before the first attempt), filtered by the reader\'s scopes.'),
  }),
  'A webhook delivery record (docs/webhooks.md).',
);

/** The delivery record of docs/webhooks.md, its envelope filtered by the reader's scopes. */
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
