import { timingSafeEqual } from 'node:crypto';
import { computeSignature, parseSignatureHeader } from './webhook-signature.js';

/**
 * For partners: verifies a webhook of this service following the five steps of interface.md §6
 * ("Verification by the recipient"). Self-contained apart from webhook-signature.ts, so that it can
 * be copied into a receiver.
 */

/** Where the receiver remembers the idempotency keys it has processed (a table, Redis, memory…). */
export interface ProcessedKeyStore {
  has(idempotencyKey: string): boolean | Promise<boolean>;
}

export interface VerifyWebhookInput {
  /** The request body exactly as received, before any JSON parsing. */
  rawBody: Buffer | string;
  headers: Headers | Record<string, string | string[] | undefined>;
  /** Every secret currently accepted by the receiver (one is enough; two while it changes secret). */
  secrets: string | readonly string[];
  store?: ProcessedKeyStore;
  now?: Date;
  toleranceSeconds?: number;
}

export type VerifyWebhookFailure = 'body_not_raw' | 'missing_headers' | 'timestamp_out_of_tolerance' | 'signature_mismatch' | 'invalid_body';

export type VerifyWebhookResult =
  | { ok: true; duplicate: boolean; idempotencyKey: string; timestamp: number; envelope: Record<string, unknown> }
  | { ok: false; reason: VerifyWebhookFailure };

export const defaultToleranceSeconds = 300;

function header(headers: VerifyWebhookInput['headers'], name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(record).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : record[key];
  return Array.isArray(value) ? value[0] : value;
}

function sameHex(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

export async function verifyWebhook(input: VerifyWebhookInput): Promise<VerifyWebhookResult> {
  // 1. The raw bytes: a body already parsed and re-serialised would not match the signature.
  if (!Buffer.isBuffer(input.rawBody) && typeof input.rawBody !== 'string') return { ok: false, reason: 'body_not_raw' };
  const body = Buffer.isBuffer(input.rawBody) ? input.rawBody : Buffer.from(input.rawBody, 'utf8');
  const signature = header(input.headers, 'x-service-signature');
  const timestampText = header(input.headers, 'x-service-timestamp');
  const idempotencyKey = header(input.headers, 'x-service-idempotency-key');
  if (!signature || !timestampText || !idempotencyKey || !/^\d{1,12}$/.test(timestampText)) return { ok: false, reason: 'missing_headers' };

  // 2. A replayed capture with an old timestamp is refused.
  const timestamp = Number(timestampText);
  const nowSeconds = Math.floor((input.now ?? new Date()).getTime() / 1000);
  if (Math.abs(nowSeconds - timestamp) > (input.toleranceSeconds ?? defaultToleranceSeconds)) return { ok: false, reason: 'timestamp_out_of_tolerance' };

  // 3 and 4. Compute with each accepted secret and compare with each signature of the header in constant time.
  const secrets = typeof input.secrets === 'string' ? [input.secrets] : input.secrets;
  const received = parseSignatureHeader(signature);
  const expected = secrets.map((secret) => computeSignature(secret, timestampText, idempotencyKey, body));
  if (!expected.some((e) => received.some((r) => sameHex(e, r)))) return { ok: false, reason: 'signature_mismatch' };

  let envelope: Record<string, unknown>;
  try {
    envelope = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { ok: false, reason: 'invalid_body' };
  }
  // 5. Already processed: the caller answers 200 without processing again.
  const duplicate = input.store ? await input.store.has(idempotencyKey) : false;
  return { ok: true, duplicate, idempotencyKey, timestamp, envelope };
}

/** A process-local store for a single receiver instance; keys are forgotten after `ttlMs`. */
export function createMemoryProcessedKeyStore(ttlMs = 24 * 3600_000) {
  const seen = new Map<string, number>();
  return {
    has(idempotencyKey: string): boolean {
      const expiresAt = seen.get(idempotencyKey);
      if (expiresAt === undefined) return false;
      if (expiresAt > Date.now()) return true;
      seen.delete(idempotencyKey);
      return false;
    },
    add(idempotencyKey: string): void {
      seen.set(idempotencyKey, Date.now() + ttlMs);
    },
  };
}
