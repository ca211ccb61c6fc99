import type { webhookEndpoints } from '../../db/schema/index.js';

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;

/** The Webhook endpoint of interface.md §2; secrets never leave the row. */
export function webhookEndpointJson(e: WebhookEndpointRow) {
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
