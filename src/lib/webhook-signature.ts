import { randomBytes } from 'node:crypto';
// The schemes themselves (signed content, HMAC, header parsing) are written once, in the module that
// partners use to verify: what the service signs is by construction what they check.
import {
  computeSignature,
  computeStandardSignature,
  signatureScheme,
  type SignatureScheme,
} from '../../clients/typescript/src/verify-webhook.js';

export { signatureSchemes, type SignatureScheme } from '../../clients/typescript/src/verify-webhook.js';

/**
 * A new secret in the format of the destination's scheme (docs/webhooks.md): `whsec_` + 32 random
 * bytes, in base64url for `service-v1` (whose HMAC key is the whole string's text) and in standard
 * base64 for `standard-webhooks` (whose libraries decode it to get the key, and refuse base64url).
 */
export function generateWebhookSecret(scheme: SignatureScheme = 'service-v1'): string {
  return `whsec_${randomBytes(32).toString(scheme === 'standard-webhooks' ? 'base64' : 'base64url')}`;
}

/** The X-Service-Signature value: one `v1=` signature per secret, newest first (`v1=<new>,v1=<previous>` during an overlap). */
export function signatureHeader(secrets: readonly string[], timestamp: string, idempotencyKey: string, body: Buffer | string): string {
  if (!secrets.length) throw new Error('at least one signing secret is required');
  return secrets.map((secret) => `${signatureScheme}=${computeSignature(secret, timestamp, idempotencyKey, body)}`).join(',');
}

/** The webhook-signature value of Standard Webhooks: one `v1,` signature per secret, newest first, separated by a space. */
export function standardSignatureHeader(secrets: readonly string[], timestamp: string, id: string, body: Buffer | string): string {
  if (!secrets.length) throw new Error('at least one signing secret is required');
  return secrets.map((secret) => `v1,${computeStandardSignature(secret, id, timestamp, body)}`).join(' ');
}

/**
 * The signature headers of one attempt in the destination's scheme: a fresh timestamp, the same
 * id (the delivery's idempotency key) and body every time.
 */
export function signedHeaders(
  scheme: SignatureScheme,
  secrets: readonly string[],
  idempotencyKey: string,
  body: Buffer,
  now = new Date(),
): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  if (scheme === 'standard-webhooks') {
    return {
      'webhook-id': idempotencyKey,
      'webhook-timestamp': timestamp,
      'webhook-signature': standardSignatureHeader(secrets, timestamp, idempotencyKey, body),
    };
  }
  return {
    'X-Service-Signature': signatureHeader(secrets, timestamp, idempotencyKey, body),
    'X-Service-Timestamp': timestamp,
    'X-Service-Idempotency-Key': idempotencyKey,
  };
}
