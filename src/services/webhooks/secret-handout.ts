import { and, eq } from 'drizzle-orm';
import { db, type Tx } from '../../db/client.js';
import { webhookSecretRotations } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { rotationReplayOutcome } from '../../lib/secret-rotation.js';
import { finishIdempotentRequest, startIdempotentRequest } from '../idempotency/idempotency-store.js';
import type { SigningSecretBox } from './signing-secrets.js';

/** The Idempotency-Key claim of a request, in the shape of the shared idempotency store. */
export interface SecretIdempotency {
  key: string;
  operation: string;
  requestHash: string;
}

export interface HandedOutSecret {
  /** null: the organisation secret. */
  endpointId: string | null;
  secretVersion: number;
  sealed: string;
  previousSecretExpiresAt: Date;
}

export type HandoutRecord = typeof webhookSecretRotations.$inferSelect;

/** Saves, in the transaction that generates the secret, what a repeat of the same key must return. */
export type RememberSecret = (tx: Tx, secret: HandedOutSecret) => Promise<void>;

/**
 * Runs an operation that shows a new secret once (endpoint creation, rotation) under an optional
 * Idempotency-Key. The shared store still answers 422 for another body or operation and 409 while
 * the first request runs, but what it stores holds no secret: a repeat is answered by `replay` from
 * the sealed record instead.
 */
export async function handOutSecretOnce<R>(
  auth: AuthContext,
  idempotency: SecretIdempotency | undefined,
  run: (remember: RememberSecret | null) => Promise<R>,
  replay: (record: HandoutRecord) => Promise<R>,
): Promise<{ result: R; replayed: boolean }> {
  if (!idempotency) return { result: await run(null), replayed: false };
  const start = await startIdempotentRequest({ apiKeyId: auth.keyId, ...idempotency });
  if (start.kind === 'replay') {
    const [record] = await db()
      .select()
      .from(webhookSecretRotations)
      .where(and(eq(webhookSecretRotations.apiKeyId, auth.keyId), eq(webhookSecretRotations.idempotencyKey, idempotency.key)));
    if (!record) throw secretSuperseded();
    return { result: await replay(record), replayed: true };
  }
  const remember: RememberSecret = async (tx, secret) => {
    const record = {
      organisationId: auth.organisationId,
      endpointId: secret.endpointId,
      secretVersion: secret.secretVersion,
      secret: secret.sealed,
      previousSecretExpiresAt: secret.previousSecretExpiresAt,
    };
    await tx
      .insert(webhookSecretRotations)
      .values({ apiKeyId: auth.keyId, idempotencyKey: idempotency.key, ...record })
      .onConflictDoUpdate({ target: [webhookSecretRotations.apiKeyId, webhookSecretRotations.idempotencyKey], set: record });
  };
  try {
    const result = await run(remember);
    await finishIdempotentRequest(auth.keyId, idempotency.key, 200, JSON.stringify({ secret: 'not stored here' }));
    return { result, replayed: false };
  } catch (err) {
    // Not remembered: the key may be used again once the cause is fixed.
    await finishIdempotentRequest(auth.keyId, idempotency.key, 500, '').catch(() => {});
    throw err;
  }
}

export function secretSuperseded(): ApiError {
  return new ApiError(
    'conflict',
    'The secret generated with this Idempotency-Key has since been rotated again; it is no longer available.',
    {
      reason: 'secret_superseded',
    },
  );
}

/** Rule 5 of docs/webhooks.md: the secret of the record while it is still the current version. */
export function openHandedOutSecret(record: HandoutRecord, currentVersion: number | null, secrets: SigningSecretBox): string {
  if (currentVersion === null || rotationReplayOutcome(record.secretVersion, currentVersion) === 'superseded') throw secretSuperseded();
  return secrets.openOne(record.secret);
}
