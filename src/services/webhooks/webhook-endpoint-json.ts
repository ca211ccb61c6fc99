import { z } from 'zod';
import { endpointHealthStates, type webhookEndpoints } from '../../db/schema/index.js';
import { signatureSchemes } from '../../lib/webhook-signature.js';
import { component, instant, uuid } from '../../core/response-schemas.js';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

const endpointHealthSchema = component(
  'WebhookEndpointHealth',
  z.object({
    state: z.enum(endpointHealthStates),
    consecutiveFailures: z.number().int().min(0),
    failingSince: instant.nullable().describe('The first failed attempt of the current streak of failures.'),
    lastSuccessAt: instant.nullable(),
    disabledAt: instant.nullable().describe('When the platform disabled the destination after failing too long.'),
  }),
  'How the attempts made to a destination are going (docs/webhooks.md "Endpoint health").',
);

export const signatureSchemeSchema = z
  .enum(signatureSchemes)
  .describe(
    'How deliveries to the destination are signed, chosen when it is registered (default `service-v1`): `service-v1` sends X-Service-Signature, X-Service-Timestamp and X-Service-Idempotency-Key; `standard-webhooks` sends webhook-id, webhook-timestamp and webhook-signature as Standard Webhooks libraries verify them (docs/webhooks.md "Signature schemes").',
  );

export const webhookEndpointSchema = component(
  'WebhookEndpoint',
  z.object({
    id: uuid,
    venueId: uuid,
    url: z.string(),
    signatureScheme: signatureSchemeSchema,
    isActive: z.boolean(),
    secretVersion: z.number().int(),
    previousSecretExpiresAt: instant,
    health: endpointHealthSchema,
    createdAt: instant,
    updatedAt: instant,
  }),
  'A webhook destination registered for a venue (docs/api.md).',
);

/** The Webhook endpoint of docs/api.md; secrets never leave the row. */
export function webhookEndpointJson(e: WebhookEndpointRow): z.output<typeof webhookEndpointSchema> {
  return {
    id: e.id,
    venueId: e.venueId,
    url: e.url,
    signatureScheme: e.signatureScheme,
    isActive: e.isActive,
    secretVersion: e.secretVersion,
    previousSecretExpiresAt: e.previousSecretExpiresAt.toISOString(),
    health: {
      state: e.healthState,
      consecutiveFailures: e.consecutiveFailures,
      failingSince: e.failingSince?.toISOString() ?? null,
      lastSuccessAt: e.lastSuccessAt?.toISOString() ?? null,
      disabledAt: e.disabledAt?.toISOString() ?? null,
    },
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}
