import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Webhook signatures of the Floorline API (docs/webhooks.md), for partners: the five verification
 * steps of "Verification by the recipient", for both signature schemes a destination may use. It
 * needs nothing but node:crypto, so it can be used from @floorline/client or copied alone into a
 * receiver. The service signs its deliveries with `computeSignature` and
 * `computeStandardSignature` of this very file, so each scheme is written down once.
 */

/**
 * The schemes a registered destination may choose: `service-v1` (the default: X-Service-Signature
 * over four lines) or `standard-webhooks` (the Standard Webhooks headers, which its libraries verify).
 */
export const signatureSchemes = ['service-v1', 'standard-webhooks'] as const;
export type SignatureScheme = (typeof signatureSchemes)[number];

/** The version tag of the signing scheme: the first line of the signed string and the prefix of each signature. */
export const signatureScheme = 'v1';

/** A delivery whose X-Service-Timestamp is further than this from the receiver's clock is refused (step 2). */
export const defaultToleranceSeconds = 300;

/** The exact bytes that are signed: `v1`, timestamp, idempotency key and the raw body, joined by line feeds. */
export function signedContent(timestamp: string, idempotencyKey: string, body: Buffer | string): Buffer {
  const head = Buffer.from(`${signatureScheme}\n${timestamp}\n${idempotencyKey}\n`, 'utf8');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** Lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of the whole `whsec_…` string. */
export function computeSignature(secret: string, timestamp: string, idempotencyKey: string, body: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'utf8'))
    .update(signedContent(timestamp, idempotencyKey, body))
    .digest('hex');
}

/** The `v1` signatures of an X-Service-Signature value (two during a rotation); other schemes and malformed entries are ignored. */
export function parseSignatureHeader(header: string): string[] {
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [scheme, value] = part.trim().split('=', 2);
    if (scheme === signatureScheme && value && /^[0-9a-f]{64}$/.test(value)) signatures.push(value);
  }
  return signatures;
}

/**
 * Standard Webhooks: the HMAC key is the base64 decoding of what follows `whsec_` (the secrets of a
 * `standard-webhooks` destination are written that way), not the secret's text.
 */
export function standardWebhooksKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
}

/** Standard Webhooks: base64 HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`. */
export function computeStandardSignature(secret: string, id: string, timestamp: string, body: Buffer | string): string {
  const head = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  const content = Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
  return createHmac('sha256', standardWebhooksKey(secret)).update(content).digest('base64');
}

/** The `v1,` signatures of a webhook-signature value (space-separated; two during a rotation); other versions are ignored. */
export function parseStandardSignatureHeader(header: string): string[] {
  const signatures: string[] = [];
  for (const part of header.split(' ')) {
    const [version, value] = part.split(',', 2);
    if (version === 'v1' && value && /^[A-Za-z0-9+/]{43}=$/.test(value)) signatures.push(value);
  }
  return signatures;
}

/** The envelope of every delivery (docs/webhooks.md "Envelope"); `data` holds the resource in its v1 response shape. */
export interface WebhookEnvelope {
  id: string;
  eventId: string | null;
  type: string;
  createdAt: string;
  venueId: string;
  apiVersion: string;
  data: Record<string, unknown>;
  automation: { name: string; runId: string } | null;
}

/** Where the receiver remembers the idempotency keys it has processed (a table, Redis, memory…): step 5. */
export interface ProcessedKeyStore {
  has(idempotencyKey: string): boolean | Promise<boolean>;
}

export interface VerifyWebhookInput {
  /** The request body exactly as received, before any JSON parsing (step 1). */
  rawBody: Buffer | string;
  headers: Headers | Record<string, string | string[] | undefined>;
  /** Every secret currently accepted by the receiver (one is enough; two while it changes secret). */
  secrets: string | readonly string[];
  /** The scheme of the destination (its `signatureScheme`); `service-v1` when not given. */
  scheme?: SignatureScheme;
  store?: ProcessedKeyStore;
  now?: Date;
  toleranceSeconds?: number;
}

export type VerifyWebhookFailure =
  'body_not_raw' | 'missing_headers' | 'timestamp_out_of_tolerance' | 'signature_mismatch' | 'invalid_body';

export type VerifyWebhookResult<Envelope = WebhookEnvelope> =
  | { ok: true; duplicate: boolean; idempotencyKey: string; timestamp: number; envelope: Envelope }
  | { ok: false; reason: VerifyWebhookFailure };

function isHeaders(headers: VerifyWebhookInput['headers']): headers is Headers {
  return typeof headers.get === 'function';
}

function readHeader(headers: VerifyWebhookInput['headers'], name: string): string | undefined {
  if (isHeaders(headers)) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return Array.isArray(value) ? value[0] : value;
}

function sameBytes(x: Buffer, y: Buffer): boolean {
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** What each scheme calls the three signed headers, how it signs and how its signatures are written. */
const schemes = {
  'service-v1': {
    headers: { signature: 'x-service-signature', timestamp: 'x-service-timestamp', id: 'x-service-idempotency-key' },
    compute: (secret: string, id: string, timestamp: string, body: Buffer) => computeSignature(secret, timestamp, id, body),
    parse: parseSignatureHeader,
    encoding: 'hex',
  },
  'standard-webhooks': {
    headers: { signature: 'webhook-signature', timestamp: 'webhook-timestamp', id: 'webhook-id' },
    compute: computeStandardSignature,
    parse: parseStandardSignatureHeader,
    encoding: 'base64',
  },
} as const;

/**
 * Verifies one delivery. `Envelope` is the type the caller gives the verified body (the client package
 * passes the envelope of its generated types); the signature is what vouches for its shape.
 */
export async function verifyWebhook<Envelope = WebhookEnvelope>(input: VerifyWebhookInput): Promise<VerifyWebhookResult<Envelope>> {
  // 1. The raw bytes: a body already parsed and re-serialised would not match the signature.
  if (!Buffer.isBuffer(input.rawBody) && typeof input.rawBody !== 'string') return { ok: false, reason: 'body_not_raw' };
  const body = Buffer.isBuffer(input.rawBody) ? input.rawBody : Buffer.from(input.rawBody, 'utf8');
  const scheme = schemes[input.scheme ?? 'service-v1'];
  const signature = readHeader(input.headers, scheme.headers.signature);
  const timestampText = readHeader(input.headers, scheme.headers.timestamp);
  const idempotencyKey = readHeader(input.headers, scheme.headers.id);
  if (!signature || !timestampText || !idempotencyKey || !/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'missing_headers' };

  // 2. A replayed capture with an old timestamp is refused.
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (input.toleranceSeconds ?? defaultToleranceSeconds))
    return { ok: false, reason: 'timestamp_out_of_tolerance' };

  // 3 and 4. Compute with each accepted secret and compare with each signature of the header in constant time.
  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets;
  const received = scheme.parse(signature).map((r) => Buffer.from(r, scheme.encoding));
  const expected = secrets.map((secret) => Buffer.from(scheme.compute(secret, idempotencyKey, timestampText, body), scheme.encoding));
  if (!expected.some((e) => received.some((r) => sameBytes(e, r)))) return { ok: false, reason: 'signature_mismatch' };

  let envelope: Envelope;
  try {
    envelope = JSON.parse(body.toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid_body' };
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) return { ok: false, reason: 'invalid_body' };
  // 5. Already processed: the caller answers 200 without processing again.
  const duplicate = input.store ? await input.store.has(idempotencyKey) : false;
  return { ok: true, duplicate, idempotencyKey, timestamp, envelope };
}

export interface MemoryProcessedKeyStore extends ProcessedKeyStore {
  has(idempotencyKey: string): boolean;
  /** Call once the delivery has been processed. */
  add(idempotencyKey: string): void;
}

/** A process-local store for a single receiver instance; keys are forgotten after `ttlMs`. */
export function createMemoryProcessedKeyStore(ttlMs = 24 * 3600_000): MemoryProcessedKeyStore {
  const seen = new Map<string, number>();
  return {
    has(idempotencyKey) {
      const expiresAt = seen.get(idempotencyKey);
      if (expiresAt === undefined) return false;
      if (expiresAt > Date.now()) return true;
      seen.delete(idempotencyKey);
      return false;
    },
    add(idempotencyKey) {
      seen.set(idempotencyKey, Date.now() + ttlMs);
    },
  };
}
