import { z } from 'zod';
import {
  deliveryStatuses,
  discardReasons,
  type webhookDeliveries,
  type webhookDeliveryAttempts,
  type webhookRecoveries,
} from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { eventTypes } from '../../lib/event-catalogue.js';
import { eventDataGroups, payloadReaderOf, payloadReservationSchema, readerEventDataGroups } from '../events/event-service.js';
import { envelopeSchemaFor } from './envelope.js';
import { filterEnvelopeForReader } from '../../lib/webhook-payload-filter.js';
import { traceIdOf } from '../../tracing/tracing.js';

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;
export type AttemptRow = typeof webhookDeliveryAttempts.$inferSelect;

const iso = (d: Date | null) => (d ? d.toISOString() : null);

const webhookTestData = eventDataGroups[3].data;

/**
 * The stored envelope as a reader sees it (filterEnvelopeForReader): without guests:read the guest
 * data is reduced to its id, without reservations:read and events:read the reservation is null.
 */
const filteredData = z.union([
  z.object({ reservation: payloadReservationSchema.nullable() }),
  ...readerEventDataGroups.slice(1).map((g) => g.data),
  webhookTestData,
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
    url: z.string().nullable().describe("The address of the action, or the destination's address at the last attempt; null until known."),
    status: z.enum(deliveryStatuses),
    attempts: z.number().int().min(0),
    nextAttemptAt: instant.nullable(),
    lastAttemptAt: instant.nullable(),
    lastResponseStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    discardReason: z.enum(discardReasons).nullable(),
    createdAt: instant,
    updatedAt: instant,
    payload: envelopeSchemaFor(eventTypes, filteredData)
      .nullable()
      .describe("The envelope as sent (null before the first attempt), filtered by the reader's scopes."),
  }),
  'A webhook delivery record (docs/webhooks.md).',
);

/** The delivery record of docs/webhooks.md, its envelope filtered by the reader's scopes. */
export function deliveryJson(d: DeliveryRow, auth: AuthContext) {
  const reader = payloadReaderOf(auth);
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

export const attemptSchema = component(
  'WebhookDeliveryAttempt',
  z.object({
    attempt: z.number().int().min(1).describe("Counted from 1 over the delivery's whole life: a redelivery continues the count."),
    startedAt: instant,
    durationMs: z.number().int().min(0),
    responseStatus: z.number().int().nullable(),
    error: z.string().nullable().describe('The failure in one line, e.g. `HTTP 500 from partner.example.com`; null for a 2xx.'),
    responseBodyExcerpt: z
      .string()
      .nullable()
      .describe("The first 1,024 bytes of the answer's body as UTF-8 text (invalid bytes as U+FFFD); null when there was no answer."),
    traceId: z
      .string()
      .nullable()
      .describe('The trace of the attempt (32 hex digits), as in the `traceparent` header it was sent with; null when tracing was off.'),
  }),
  'One attempt of a webhook delivery (docs/webhooks.md "Attempt log").',
);

export function attemptJson(a: AttemptRow): z.output<typeof attemptSchema> {
  return {
    attempt: a.attempt,
    startedAt: a.startedAt.toISOString(),
    durationMs: a.durationMs,
    responseStatus: a.responseStatus,
    error: a.error,
    responseBodyExcerpt: a.responseBodyExcerpt,
    traceId: traceIdOf(a.traceparent),
  };
}

export const recoverySchema = component(
  'WebhookRecovery',
  z.object({
    id: uuid,
    endpointId: uuid,
    since: instant,
    until: instant,
    deliveries: z.number().int().min(0).describe('How many discarded deliveries started a new cycle of attempts.'),
  }),
  'A recovery of a destination\'s discarded deliveries (docs/webhooks.md "Recovery").',
);

export function recoveryJson(r: typeof webhookRecoveries.$inferSelect): z.output<typeof recoverySchema> {
  return { id: r.id, endpointId: r.endpointId, since: r.since.toISOString(), until: r.until.toISOString(), deliveries: r.deliveries };
}
