import { and, eq, sql } from 'drizzle-orm';
import { db, savepoint, transaction, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { imports, type ImportRejection } from '../../db/schema/index.js';
import type { ImportRow } from './import-json.js';
import { importChunkSize, type PreparedImport } from './import-contract.js';
import { importProcessors } from './import-processors.js';
import { activeTraceCarrier, inSpan, type ActiveSpan } from '../../tracing/tracing.js';

/**
 * Runs an import to its end. Each chunk of rows is written in one transaction together with the
 * progress (`processedRows`) and counts, so a crashed run resumes where the last committed chunk
 * ended, without duplicates.
 */
export async function runImport(importId: string): Promise<void> {
  const [record] = await db().select().from(imports).where(eq(imports.id, importId));
  if (!record || record.status !== 'processing') return;
  const prepared = await prepareImport(record);
  while (await processNextChunk(importId, prepared));
  await db()
    .update(imports)
    .set({ status: 'completed', completedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(imports.updatedAt) })
    .where(and(eq(imports.id, importId), eq(imports.status, 'processing')));
}

function prepareImport(record: ImportRow): Promise<PreparedImport> {
  const prepare = importProcessors[record.kind];
  if (!prepare) throw new Error(`no processor for imports of kind ${record.kind}`);
  return prepare(record);
}

/** What a chunk of rows produced: the counts and rejections it adds to the import. */
export interface ChunkTally {
  created: number;
  updated: number;
  rejections: ImportRejection[];
}

/** Rows start..end-1 through the import's processor, in the given transaction: the one path of real and dry-run imports. */
export async function processRows(tx: Tx, prepared: PreparedImport, start: number, end: number): Promise<ChunkTally> {
  const tally: ChunkTally = { created: 0, updated: 0, rejections: [] };
  for (let index = start; index < end; index++) {
    const result = await prepared.processRow(tx, index);
    if (result.outcome === 'created') tally.created++;
    else if (result.outcome === 'updated') tally.updated++;
    else tally.rejections.push({ row: index, code: result.code, message: result.message, fields: result.fields });
  }
  return tally;
}

/**
 * Processes the next chunk of rows in one transaction with the progress; false when nothing is left.
 * Each chunk is a trace of its own (docs/operations.md "Tracing"), linked to the import job's span:
 * an import of thousands of rows is many traces of one transaction each, not one trace that grows
 * with every row.
 */
export async function processNextChunk(importId: string, prepared: PreparedImport): Promise<boolean> {
  const job = activeTraceCarrier();
  const start = { parent: null, links: job ? [job] : [], attributes: { 'floorline.import.id': importId } };
  return inSpan('import chunk', start, (span) => transactionOfNextChunk(importId, prepared, span));
}

function transactionOfNextChunk(importId: string, prepared: PreparedImport, span: ActiveSpan): Promise<boolean> {
  return transaction(async (tx) => {
    // The lock serialises two runs of one import (a stalled job picked up again): each chunk is done once.
    const [current] = await tx.select().from(imports).where(eq(imports.id, importId)).for('update');
    if (current.status !== 'processing' || current.processedRows >= current.totalRows) return false;
    const end = Math.min(current.processedRows + importChunkSize, current.totalRows);
    span.setAttributes({ 'floorline.import.first_row': current.processedRows, 'floorline.import.rows': end - current.processedRows });
    const { created, updated, rejections } = await processRows(tx, prepared, current.processedRows, end);
    await tx
      .update(imports)
      .set({
        processedRows: end,
        createdRows: sql`${imports.createdRows} + ${created}`,
        updatedRows: sql`${imports.updatedRows} + ${updated}`,
        rejectedRows: sql`${imports.rejectedRows} + ${rejections.length}`,
        rejections: sql`${imports.rejections} || ${JSON.stringify(rejections)}::jsonb`,
        updatedAt: nextUpdatedAt(imports.updatedAt),
      })
      .where(eq(imports.id, importId));
    return end < current.totalRows;
  });
}

/** Thrown to roll a dry run back once its plan is known. */
class DryRunDone extends Error {}

/**
 * A dry run (docs/operations.md "Reservation imports"): the real processing, chunk by chunk (each chunk in a savepoint, as
 * each is a transaction of a real run, so that processors see the same chunk boundaries and the
 * earlier chunks' writes), inside one transaction that is then rolled back. The plan therefore
 * cannot differ from what the import would do against the same data. The record is never stored.
 */
export async function planImport(record: ImportRow): Promise<ChunkTally> {
  const prepared = await prepareImport(record);
  const total: ChunkTally = { created: 0, updated: 0, rejections: [] };
  try {
    await transaction(async (tx) => {
      for (let start = 0; start < record.totalRows; start += importChunkSize) {
        const end = Math.min(start + importChunkSize, record.totalRows);
        const chunk = await savepoint(tx, (sp) => processRows(sp, prepared, start, end));
        total.created += chunk.created;
        total.updated += chunk.updated;
        total.rejections.push(...chunk.rejections);
      }
      throw new DryRunDone();
    });
  } catch (err) {
    if (!(err instanceof DryRunDone)) throw err;
  }
  return total;
}

/** An import whose last attempt failed; one already concluded is left as it is. */
export async function markImportFailed(importId: string): Promise<void> {
  await db()
    .update(imports)
    .set({ status: 'failed', completedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(imports.updatedAt) })
    .where(and(eq(imports.id, importId), eq(imports.status, 'processing')));
}
