import { z } from 'zod';
import type { webhookEndpoints } from '../../db/schema/index.js';
import { component, instant, uuid } from '../../core/response-schemas.js';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

export const webhookEndpointSchema = component(
  'WebhookEndpoint',
  z.object({
    id: uuid,
    venueId: uuid,
    url: z.string(),
    isActive: z.boolean(),
    secretVersion: z.number().int(),
    previousSecretExpiresAt: instant,
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
    isActive: e.isActive,
    secretVersion: e.secretVersion,
    previousSecretExpiresAt: e.previousSecretExpiresAt.toISOString(),
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}
