import { verifyWebhook, type VerifyWebhookInput, type VerifyWebhookResult, type WebhookEnvelope } from './verify-webhook.js';

export * from './client.js';
export * from './verify-webhook.js';

/** A verified delivery of the API. */
export type WebhookEvent = WebhookEnvelope;

/** verifyWebhook, with the envelope typed from the API's document. */
export function verifyFloorlineWebhook(input: VerifyWebhookInput): Promise<VerifyWebhookResult<WebhookEvent>> {
  return verifyWebhook<WebhookEvent>(input);
}
