import { and, eq } from 'drizzle-orm';
import { db, transaction, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { organisationWebhookSecrets, webhookEndpoints } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { rotateSecretState } from '../../lib/secret-rotation.js';
import type { SignatureScheme } from '../../lib/webhook-signature.js';
import { handOutSecretOnce, openHandedOutSecret, type RememberSecret, type SecretIdempotency } from './secret-handout.js';
import {
  getOrganisationSecretState,
  secretColumnsOf,
  secretStateOf,
  type SealedSecretState,
  type SigningSecretBox,
} from './signing-secrets.js';
import { getVisibleEndpoint } from './webhook-endpoint-service.js';

export type RotationTarget = { kind: 'organisation' } | { kind: 'endpoint'; endpointId: string };

export interface RotationResult {
  secret: string;
  secretVersion: number;
  previousSecretExpiresAt: string;
}

/** Locks the secret row of the target for the rotation and returns its state and the scheme its secrets are for. */
async function lockTarget(
  tx: Tx,
  auth: AuthContext,
  target: RotationTarget,
  secrets: SigningSecretBox,
): Promise<{ state: SealedSecretState; scheme: SignatureScheme }> {
  if (target.kind === 'endpoint') {
    const [row] = await tx
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, target.endpointId), eq(webhookEndpoints.organisationId, auth.organisationId)))
      .for('update');
    if (!row) throw ApiError.notFound('Webhook endpoint');
    return { state: secretStateOf(row), scheme: row.signatureScheme };
  }
  await getOrganisationSecretState(auth.organisationId, secrets, tx);
  const [row] = await tx
    .select()
    .from(organisationWebhookSecrets)
    .where(eq(organisationWebhookSecrets.organisationId, auth.organisationId))
    .for('update');
  return { state: secretStateOf(row), scheme: 'service-v1' };
}

async function currentVersion(auth: AuthContext, target: RotationTarget, secrets: SigningSecretBox): Promise<number | null> {
  if (target.kind === 'endpoint') {
    const [row] = await db()
      .select({ version: webhookEndpoints.secretVersion })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.id, target.endpointId));
    return row?.version ?? null;
  }
  return (await getOrganisationSecretState(auth.organisationId, secrets)).version;
}

async function rotate(
  auth: AuthContext,
  target: RotationTarget,
  overlapMinutes: number,
  remember: RememberSecret | null,
  secrets: SigningSecretBox,
): Promise<RotationResult> {
  return transaction(async (tx) => {
    const { state, scheme } = await lockTarget(tx, auth, target, secrets);
    const { secret, sealed } = secrets.sealNew(scheme);
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
    await remember?.(tx, {
      endpointId: target.kind === 'endpoint' ? target.endpointId : null,
      secretVersion: next.version,
      sealed,
      previousSecretExpiresAt: next.previousExpiresAt,
    });
    return { secret, secretVersion: next.version, previousSecretExpiresAt: next.previousExpiresAt.toISOString() };
  }, auth.signal);
}

/**
 * Generates the next secret version of an endpoint or of the organisation, sealed by `secrets`, and
 * returns it once; the same Idempotency-Key returns it again while it is current, then 409
 * (docs/webhooks.md rule 5).
 */
export async function rotateWebhookSecret(
  auth: AuthContext,
  target: RotationTarget,
  overlapMinutes: number,
  secrets: SigningSecretBox,
  idempotency?: SecretIdempotency,
) {
  if (target.kind === 'endpoint') await getVisibleEndpoint(auth, target.endpointId);
  return handOutSecretOnce(
    auth,
    idempotency,
    (remember) => rotate(auth, target, overlapMinutes, remember, secrets),
    async (record): Promise<RotationResult> => ({
      secret: openHandedOutSecret(record, await currentVersion(auth, target, secrets), secrets),
      secretVersion: record.secretVersion,
      previousSecretExpiresAt: record.previousSecretExpiresAt.toISOString(),
    }),
  );
}
