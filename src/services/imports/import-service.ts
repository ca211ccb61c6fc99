import { randomUUID } from 'node:crypto';
import { and, arrayContained, eq, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { imports } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { checkIdempotencyKey } from '../../core/route-definition.js';
import { ApiError } from '../../core/errors.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { addImportJob, importJob, type ImportToEnqueue } from '../../jobs/import-job.js';
import { getQueue } from '../../queues/queues.js';
import { finishIdempotentRequest, startIdempotentRequest } from '../idempotency/idempotency-store.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { importJson, type ImportKind, type ImportRow } from './import-json.js';
import { planImport } from './process-import-job.js';

export interface ImportSubmission {
  kind: ImportKind;
  rows: unknown[];
  /** SHA-256 of the canonical request body: the same key with another body is refused. */
  requestHash: string;
  idempotencyKey?: string;
}

/** Imports of a key limited to certain venues are visible only to keys that see all of those venues. */
function visibleImports(auth: AuthContext) {
  return and(
    eq(imports.organisationId, auth.organisationId),
    auth.venueIds === null ? undefined : and(sql`${imports.venueIds} is not null`, arrayContained(imports.venueIds, [...auth.venueIds])),
  );
}

async function findByIdempotencyKey(auth: AuthContext, key: string): Promise<ImportRow | undefined> {
  const [row] = await db()
    .select()
    .from(imports)
    .where(and(eq(imports.apiKeyId, auth.keyId), eq(imports.idempotencyKey, key)));
  return row;
}

function replayOrRefuse(existing: ImportRow, submission: ImportSubmission): ImportRow {
  if (existing.kind !== submission.kind || existing.requestHash !== submission.requestHash) {
    throw new ApiError('idempotency_key_reused', 'This Idempotency-Key was already used for another import.');
  }
  return existing;
}

/** Best effort: requeueStalledImports catches what Redis missed. */
export async function enqueueImport(row: ImportToEnqueue, log: Logger = logger): Promise<void> {
  await addImportJob(row).catch((err: unknown) =>
    log.warn({ err: (err as Error).message, importId: row.id }, 'import not enqueued; the sweeper will retry'),
  );
}

/**
 * Records an import and hands it to worker-imports. With an Idempotency-Key the import record is
 * the memory of the key (docs/api.md "Keys, limits" and "Idempotency"): the same key and body give back that import, in its
 * current state (`replayed`), another body is 422. The key is also claimed in the shared store,
 * so that one key is never used for both an import and another operation.
 */
export async function submitImport(
  auth: AuthContext,
  submission: ImportSubmission,
  log: Logger = logger,
): Promise<{ record: ImportRow; replayed: boolean }> {
  const key = submission.idempotencyKey;
  if (key === undefined) return { record: await insertImport(auth, submission, log), replayed: false };
  checkIdempotencyKey(key);

  const existing = await findByIdempotencyKey(auth, key);
  if (existing) return { record: replayOrRefuse(existing, submission), replayed: true };
  const claim = await startIdempotentRequest({
    apiKeyId: auth.keyId,
    key,
    operation: `POST /imports/${submission.kind}`,
    requestHash: submission.requestHash,
  });
  if (claim.kind === 'replay') {
    const stored = await findByIdempotencyKey(auth, key);
    if (stored) return { record: replayOrRefuse(stored, submission), replayed: true };
  }
  let record: ImportRow;
  try {
    record = await insertImport(auth, submission, log);
  } catch (err) {
    await finishIdempotentRequest(auth.keyId, key, 500, '');
    throw err;
  }
  await finishIdempotentRequest(auth.keyId, key, 202, JSON.stringify({ import: importJson(record) }));
  return { record, replayed: false };
}

async function insertImport(auth: AuthContext, submission: ImportSubmission, log: Logger): Promise<ImportRow> {
  const [record] = await db()
    .insert(imports)
    .values({
      organisationId: auth.organisationId,
      apiKeyId: auth.keyId,
      venueIds: auth.venueIds ? [...auth.venueIds] : null,
      kind: submission.kind,
      idempotencyKey: submission.idempotencyKey ?? null,
      requestHash: submission.requestHash,
      rows: submission.rows,
      totalRows: submission.rows.length,
    })
    .returning();
  await enqueueImport(record, log);
  return record;
}

/**
 * ?dryRun=true (docs/operations.md "Reservation imports"): the rows go through the real processing (planImport) and the
 * answer is the record the import would end with, status `dry_run`. Nothing is stored, not even an
 * Idempotency-Key: a dry run changes nothing, so repeating it is harmless anyway.
 */
export async function dryRunImport(auth: AuthContext, submission: Omit<ImportSubmission, 'idempotencyKey'>) {
  const now = new Date();
  const record: ImportRow = {
    id: randomUUID(),
    organisationId: auth.organisationId,
    apiKeyId: auth.keyId,
    venueIds: auth.venueIds ? [...auth.venueIds] : null,
    kind: submission.kind,
    status: 'processing',
    idempotencyKey: null,
    requestHash: submission.requestHash,
    rows: submission.rows,
    totalRows: submission.rows.length,
    processedRows: 0,
    createdRows: 0,
    updatedRows: 0,
    rejectedRows: 0,
    rejections: [],
    createdAt: now,
    completedAt: null,
    updatedAt: now,
  };
  const plan = await planImport(record);
  const planned = {
    ...record,
    processedRows: record.totalRows,
    createdRows: plan.created,
    updatedRows: plan.updated,
    rejectedRows: plan.rejections.length,
    rejections: plan.rejections,
    completedAt: new Date(),
  };
  return { ...importJson(planned), status: 'dry_run' as const };
}

export async function getVisibleImport(auth: AuthContext, id: string): Promise<ImportRow> {
  const [row] = await db()
    .select()
    .from(imports)
    .where(and(eq(imports.id, id), visibleImports(auth)));
  if (!row) throw ApiError.notFound('Import');
  return row;
}

export async function listImports(auth: AuthContext, query: ListQuery) {
  return fetchPage<ImportRow>({
    query,
    idColumn: imports.id,
    naturalOrder: [{ column: imports.createdAt, kind: 'instant', read: (r) => r.createdAt }],
    updatedAt: { column: imports.updatedAt, kind: 'instant', read: (r) => r.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(imports)
        .where(and(visibleImports(auth), keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}

const stalledAfterSeconds = 60;

/**
 * Re-enqueues imports still processing without progress for a minute whose job Redis does not
 * hold (Redis was down at submission, or lost its data): PostgreSQL keeps the import, so it is
 * never lost. A job that exists and waits is left alone.
 */
export async function requeueStalledImports(): Promise<number> {
  const stalled = await db()
    .select({ id: imports.id, organisationId: imports.organisationId, kind: imports.kind, totalRows: imports.totalRows })
    .from(imports)
    .where(
      and(
        eq(imports.status, 'processing'),
        lt(imports.updatedAt, sql`statement_timestamp() - make_interval(secs => ${stalledAfterSeconds})`),
      ),
    )
    .limit(100);
  const queue = getQueue(importJob.queueName);
  let requeued = 0;
  for (const row of stalled) {
    const job = await queue.getJob(row.id);
    if (job && !(await job.isCompleted()) && !(await job.isFailed())) continue;
    if (job) await job.remove();
    await addImportJob(row);
    requeued++;
  }
  return requeued;
}
