import { and, eq, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { idempotencyKeys } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';

export const idempotencyRetentionHours = 24;
const lockSeconds = 60;

export type IdempotencyStart = { kind: 'run' } | { kind: 'replay'; status: number; body: string };

interface Claim {
  apiKeyId: string;
  key: string;
  operation: string;
  requestHash: string;
}

/**
 * Claims an Idempotency-Key for one run. The primary key (api key, key) makes two concurrent
 * claims race inside PostgreSQL: exactly one inserts, the other sees the running row.
 */
export async function startIdempotentRequest(claim: Claim): Promise<IdempotencyStart> {
  const inserted = await db()
    .insert(idempotencyKeys)
    .values({ ...claim, state: 'running', lockedAt: sql`clock_timestamp()` })
    .onConflictDoNothing()
    .returning({ key: idempotencyKeys.key });
  if (inserted.length) return { kind: 'run' };

  const [row] = await db()
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.apiKeyId, claim.apiKeyId), eq(idempotencyKeys.key, claim.key)));
  if (!row) return startIdempotentRequest(claim); // released between our insert and select

  // A key older than the retention period counts as new; a dead run's lock expires after 60 s.
  const takeOver = await db()
    .update(idempotencyKeys)
    .set({
      ...claim,
      state: 'running',
      lockedAt: sql`clock_timestamp()`,
      createdAt: sql`clock_timestamp()`,
      responseStatus: null,
      responseBody: null,
    })
    .where(
      and(
        eq(idempotencyKeys.apiKeyId, claim.apiKeyId),
        eq(idempotencyKeys.key, claim.key),
        sql`(${idempotencyKeys.createdAt} < statement_timestamp() - make_interval(hours => ${idempotencyRetentionHours})
          or (${idempotencyKeys.operation} = ${claim.operation} and ${idempotencyKeys.requestHash} = ${claim.requestHash}
              and ${idempotencyKeys.state} = 'running' and ${idempotencyKeys.lockedAt} < statement_timestamp() - make_interval(secs => ${lockSeconds})))`,
      ),
    )
    .returning({ key: idempotencyKeys.key });
  if (takeOver.length) return { kind: 'run' };

  if (row.operation !== claim.operation || row.requestHash !== claim.requestHash) {
    throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used for another operation or body.');
  }
  if (row.state === 'done' && row.responseStatus !== null && row.responseBody !== null) {
    return { kind: 'replay', status: row.responseStatus, body: row.responseBody };
  }
  throw new ApiError('idempotency_in_progress');
}

/**
 * Stores the outcome for replay, or frees the key when the outcome must not be remembered. Records
 * the outcome even when the request's client has gone (it is given no signal): a change that
 * committed must be replayed, never run again, when the client retries with the key.
 */
export async function finishIdempotentRequest(apiKeyId: string, key: string, status: number, body: string): Promise<void> {
  const where = and(eq(idempotencyKeys.apiKeyId, apiKeyId), eq(idempotencyKeys.key, key));
  const remember = status < 500 && status !== 409 && status !== 429;
  if (remember) {
    await db().update(idempotencyKeys).set({ state: 'done', responseStatus: status, responseBody: body }).where(where);
  } else {
    await db().delete(idempotencyKeys).where(where);
  }
}

/** Keys older than their 24 h (idempotency_keys_created_idx reads only these). */
export const expiredIdempotencyKeys = lt(
  idempotencyKeys.createdAt,
  sql`statement_timestamp() - make_interval(hours => ${idempotencyRetentionHours})`,
);

export async function purgeExpiredIdempotencyKeys(): Promise<number> {
  const deleted = await db().delete(idempotencyKeys).where(expiredIdempotencyKeys).returning({ key: idempotencyKeys.key });
  return deleted.length;
}
