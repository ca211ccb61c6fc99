import { eq } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { organisationWebhookSecrets } from '../../db/schema/index.js';
import { openSecret, sealSecret } from '../../lib/secret-box.js';
import { signingSecrets, type SecretState } from '../../lib/secret-rotation.js';
import { generateWebhookSecret, type SignatureScheme } from '../../lib/webhook-signature.js';

/** Secrets at rest are sealed strings; they are opened only to sign or to hand a new one out once. */
export type SealedSecretState = SecretState<string>;

interface SecretColumns {
  currentSecret: string;
  previousSecret: string | null;
  secretVersion: number;
  previousSecretExpiresAt: Date;
}

export function secretStateOf(row: SecretColumns): SealedSecretState {
  return {
    current: row.currentSecret,
    previous: row.previousSecret,
    version: row.secretVersion,
    previousExpiresAt: row.previousSecretExpiresAt,
  };
}

export function secretColumnsOf(state: SealedSecretState): SecretColumns {
  return {
    currentSecret: state.current,
    previousSecret: state.previous,
    secretVersion: state.version,
    previousSecretExpiresAt: state.previousExpiresAt,
  };
}

const maxOpened = 1000;

/**
 * Seals new signing secrets and opens sealed ones with the process's key (SECRETS_KEY), given by the
 * composition root. Keeps those it has opened by their sealed form (unique per secret: a random IV
 * each): a delivery is signed at every attempt, and deciphering was a fair part of an attempt's work.
 * Bounded; the plaintexts stay in the memory of the process that signs with them anyway. One per
 * worker-webhooks process and one per web app.
 */
export class SigningSecretBox {
  private readonly opened = new Map<string, string>();

  constructor(private readonly secretsKey: Buffer) {}

  /** A new secret in the format of the scheme it will sign with; the organisation's secret signs with `service-v1`. */
  sealNew(scheme: SignatureScheme = 'service-v1'): { secret: string; sealed: string } {
    const secret = generateWebhookSecret(scheme);
    return { secret, sealed: sealSecret(secret, this.secretsKey) };
  }

  /** One sealed secret in plain text (a secret handed out once, shown again for its Idempotency-Key). */
  openOne(sealed: string): string {
    return openSecret(sealed, this.secretsKey);
  }

  /** The plaintext secrets that sign now, newest first. */
  open(state: SealedSecretState, now = new Date()): string[] {
    return signingSecrets(state, now).map((sealed) => this.openCached(sealed));
  }

  private openCached(sealed: string): string {
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      plain = openSecret(sealed, this.secretsKey);
      if (this.opened.size >= maxOpened) this.opened.clear();
      this.opened.set(sealed, plain);
    }
    return plain;
  }
}

/**
 * The organisation secret, created on first use: until someone rotates it, deliveries are signed
 * with this initial version 1, which is never shown.
 */
export async function getOrganisationSecretState(
  organisationId: string,
  secrets: SigningSecretBox,
  conn: DbOrTx = db(),
): Promise<SealedSecretState> {
  const [existing] = await conn
    .select()
    .from(organisationWebhookSecrets)
    .where(eq(organisationWebhookSecrets.organisationId, organisationId));
  if (existing) return secretStateOf(existing);
  await conn
    .insert(organisationWebhookSecrets)
    .values({ organisationId, currentSecret: secrets.sealNew().sealed, secretVersion: 1, previousSecretExpiresAt: new Date() })
    .onConflictDoNothing();
  const [row] = await conn.select().from(organisationWebhookSecrets).where(eq(organisationWebhookSecrets.organisationId, organisationId));
  return secretStateOf(row);
}
