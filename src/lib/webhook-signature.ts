import { randomBytes } from 'node:crypto';
// The scheme itself (signed content, HMAC, header parsing) is written once, in the module that
// partners use to verify: what the service signs is by construction what they check.
import { computeSignature, signatureScheme } from '../../clients/typescript/src/verify-webhook.js';

/** `whsec_` + 32 random bytes base64url (docs/webhooks.md). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The X-Service-Signature value: one `v1=` signature per secret, newest first (`v1=<new>,v1=<previous>` during an overlap). */
export function signatureHeader(secrets: readonly string[], timestamp: string, idempotencyKey: string, body: Buffer | string): string {
  if (!secrets.length) throw new Error('at least one signing secret is required');
  return secrets.map((secret) => `${signatureScheme}=${computeSignature(secret, timestamp, idempotencyKey, body)}`).join(',');
}
