import { createHmac, randomBytes } from 'node:crypto';

/** The version tag of the signing scheme: the first line of the signed string and the prefix of each signature. */
export const signatureScheme = 'v1';

/** `whsec_` + 32 random bytes base64url (decisions §12). */
export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** The exact bytes that are signed: `v1`, timestamp, idempotency key and the raw body, joined by line feeds. */
export function signedContent(timestamp: string, idempotencyKey: string, body: Buffer | string): Buffer {
  const head = Buffer.from(`${signatureScheme}\n${timestamp}\n${idempotencyKey}\n`, 'utf8');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** Lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of the whole `whsec_…` string. */
export function computeSignature(secret: string, timestamp: string, idempotencyKey: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(signedContent(timestamp, idempotencyKey, body)).digest('hex');
}

/** The X-Service-Signature value: one `v1=` signature per secret, newest first (`v1=<new>,v1=<previous>` during an overlap). */
export function signatureHeader(secrets: readonly string[], timestamp: string, idempotencyKey: string, body: Buffer | string): string {
  if (!secrets.length) throw new Error('at least one signing secret is required');
  return secrets.map((secret) => `${signatureScheme}=${computeSignature(secret, timestamp, idempotencyKey, body)}`).join(',');
}

/** The `v1` signatures of a header value; entries of other schemes and malformed entries are ignored. */
export function parseSignatureHeader(header: string): string[] {
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [scheme, value] = part.trim().split('=', 2);
    if (scheme === signatureScheme && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  return signatures;
}
