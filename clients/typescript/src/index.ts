import type { webhooks } from './schema.js';
import { verifyWebhook, type VerifyWebhookInput, type VerifyWebhookResult } from './verify-webhook.js';

export * from './client.js';
export * from './verify-webhook.js';

type DeliveryBody<Name extends keyof webhooks> = webhooks[Name]['post'] extends {
  requestBody: { content: { 'application/json': infer Body } };
}
  ? Body
  : never;

/** The body of a delivery, from the document's `webhooks`: a union discriminated by `type` (`event.type === 'guest_seated'` narrows `data`). */
export type WebhookEvent = { [Name in keyof webhooks]: DeliveryBody<Name> }[keyof webhooks];

/** verifyWebhook, with the envelope typed from the API's document. */
export function verifyFloorlineWebhook(input: VerifyWebhookInput): Promise<VerifyWebhookResult<WebhookEvent>> {
  return verifyWebhook<WebhookEvent>(input);
}
