import { and, eq } from 'drizzle-orm';
import { config } from '../../config.js';
import { db, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { organisationWebhookSecrets, webhookEndpoints, webhookSecretRotations } from '../../db/schema/index.js';
import type { AuthContext } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import { openSecret } from '../../lib/secret-box.js';
import { rotateSecretState, rotationReplayOutcome } from '../../lib/secret-rotation.js';
import { finishIdempotentRequest, startIdempotentRequest } from '../idempotency/idempotency-store.js';
import { getOrganisationSecretState, sealNewSecret, secretColumnsOf, secretStateOf, type SealedSecretState } from './signing-secrets.js';
import { getVisibleEndpoint } from './webhook-endpoint-service.js';

export type RotationTarget = { kind: 'organisation' } | { kind: 'endpoint'; endpointId: string };

export interface RotationResult {
  secret: string;
  secretVersion: number;
  previousSecretExpiresAt: string;
}

/** The Idempotency-Key claim of the request, in the shape of the shared idempotency store. */
export interface RotationIdempotency {
  key: string;
  operation: string;
  requestHash: string;
}

/** Locks the secret row of the target for the rotation and returns its state. */
async function lockTarget(tx: Tx, auth: AuthContext, target: RotationTarget): Promise<SealedSecretState> {
  if (target.kind === 'endpoint') {
    const [row] = await tx
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, target.endpointId), eq(webhookEndpoints.organisationId, auth.organisationId)))
      .for('update');
    if (!row) throw ApiError.notFound('Webhook endpoint');
    return secretStateOf(row);
  }
  await getOrganisationSecretState(auth.organisationId, tx);
  const [row] = await tx.select().from(organisationWebhookSecrets).where(eq(organisationWebhookSecrets.organisationId, auth.organisationId)).for('update');
  return secretStateOf(row);
}

async function currentVersion(auth: AuthContext, target: RotationTarget): Promise<number | null> {
  if (target.kind === 'endpoint') {
    const [row] = await db.select({ version: webhookEndpoints.secretVersion }).from(webhookEndpoints).where(eq(webhookEndpoints.id, target.endpointId));
    return row?.version ?? null;
  }
  return (await getOrganisationSecretState(auth.organisationId)).version;
}

async function rotate(auth: AuthContext, target: RotationTarget, overlapMinutes: number, idempotency?: RotationIdempotency): Promise<RotationResult> {
  return db.transaction(async (tx) => {
    const state = await lockTarget(tx, auth, target);
    const { secret, sealed } = sealNewSecret();
    const next = rotateSecretState(state, sealed, new Date(), overlapMinutes);
    const columns = secretColumnsOf(next);
    if (target.kind === 'endpoint') {
      await tx
        .update(webhookEndpoints)
        .set({ ...columns, updatedAt: nextUpdatedAt(webhookEndpoints.updatedAt) })
        .where(eq(webhookEndpoints.id, target.endpointId));
    } else {
      await tx
        .update(organisationWebhookSecrets)
        .set({ ...columns, updatedAt: nextUpdatedAt(organisationWebhookSecrets.updatedAt) })
        .where(eq(organisationWebhookSecrets.organisationId, auth.organisationId));
    }
    if (idempotency) {
      const record = {
        organisationId: auth.organisationId,
        endpointId: target.kind === 'endpoint' ? target.endpointId : null,
        secretVersion: next.version,
        secret: sealed,
        previousSecretExpiresAt: next.previousExpiresAt,
      };
      await tx
        .insert(webhookSecretRotations)
        .values({ apiKeyId: auth.keyId, idempotencyKey: idempotency.key, ...record })
        .onConflictDoUpdate({ target: [webhookSecretRotations.apiKeyId, webhookSecretRotations.idempotencyKey], set: record });
    }
    return { secret, secretVersion: next.version, previousSecretExpiresAt: next.previousExpiresAt.toISOString() };
  });
}

/** Rule 5 of interface.md §6: the same secret while it is current, 409 without a secret once superseded. */
async function replay(auth: AuthContext, target: RotationTarget, key: string): Promise<RotationResult> {
  const [record] = await db
    .select()
    .from(webhookSecretRotations)
    .where(and(eq(webhookSecretRotations.apiKeyId, auth.keyId), eq(webhookSecretRotations.idempotencyKey, key)));
  const version = await currentVersion(auth, target);
  if (!record || version === null || rotationReplayOutcome(record.secretVersion, version) === 'superseded') {
    throw new ApiError('conflict', 'The secret generated with this Idempotency-Key has since been rotated again; it is no longer available.', {
      reason: 'secret_superseded',
    });
  }
  return { secret: openSecret(record.secret, config.secretsKey), secretVersion: record.secretVersion, previousSecretExpiresAt: record.previousSecretExpiresAt.toISOString() };
}

/**
 * Generates the next secret version of an endpoint or of the organisation and returns it once.
 * With an Idempotency-Key the shared store gives the usual 409/422 answers, but the stored response
 * holds no secret: a replay is answered from the sealed rotation record instead.
 */
export async function rotateWebhookSecret(
  auth: AuthContext,
  target: RotationTarget,
  overlapMinutes: number,
  idempotency?: RotationIdempotency,
): Promise<RotationResult & { replayed: boolean }> {
  if (target.kind === 'endpoint') await getVisibleEndpoint(auth, target.endpointId);
  if (!idempotency) return { ...(await rotate(auth, target, overlapMinutes)), replayed: false };

  const start = await startIdempotentRequest({ apiKeyId: auth.keyId, ...idempotency });
  if (start.kind === 'replay') return { ...(await replay(auth, target, idempotency.key)), replayed: true };
  try {
    const result = await rotate(auth, target, overlapMinutes, idempotency);
    await finishIdempotentRequest(auth.keyId, idempotency.key, 200, JSON.stringify({ secretVersion: result.secretVersion }));
    return { ...result, replayed: false };
  } catch (err) {
    // Not remembered: the key may be used again once the cause is fixed.
    await finishIdempotentRequest(auth.keyId, idempotency.key, 500, '').catch(() => {});
    throw err;
  }
}
