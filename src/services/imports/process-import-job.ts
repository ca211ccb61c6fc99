import type { Job } from 'bullmq';
import { and, eq, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { imports, type ImportRejection } from '../../db/schema/index.js';
import { importJobSchema } from '../../queues/job-payloads.js';
import { importProcessors, type PreparedImport } from './import-processors.js';

/** Rows per transaction: a crash loses at most one chunk of work, which is then done again. */
export const importChunkSize = 100;

/**
 * worker-imports: runs an import to its end. Each chunk of rows is written in one transaction
 * together with the progress (`processedRows`) and counts, so a crashed run resumes where the
 * last committed chunk ended, without duplicates. When the last attempt fails, the import is
 * marked `failed`.
 */
export async function processImportJob(job: Job): Promise<void> {
  const { importId } = importJobSchema.parse(job.data);
  try {
    await runImport(importId);
  } catch (err) {
    if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await markImportFailed(importId);
    throw err;
  }
}

export async function runImport(importId: string): Promise<void> {
  const [record] = await db.select().from(imports).where(eq(imports.id, importId));
  if (!record || record.status !== 'processing') return;
  const prepare = importProcessors[record.kind];
  if (!prepare) throw new Error(`no processor for imports of kind ${record.kind}`);
  const prepared = await prepare(record);
  while (await processNextChunk(importId, prepared));
  await db
    .update(imports)
    .set({ status: 'completed', completedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(imports.updatedAt) })
    .where(and(eq(imports.id, importId), eq(imports.status, 'processing')));
}

/** Processes the next chunk of rows in one transaction with the progress; false when nothing is left. */
export async function processNextChunk(importId: string, prepared: PreparedImport): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The lock serialises two runs of one import (a stalled job picked up again): each chunk is done once.
    const [current] = await tx.select().from(imports).where(eq(imports.id, importId)).for('update');
    if (current.status !== 'processing' || current.processedRows >= current.totalRows) return false;
    const end = Math.min(current.processedRows + importChunkSize, current.totalRows);
    const rejections: ImportRejection[] = [];
    let created = 0;
    let updated = 0;
    for (let index = current.processedRows; index < end; index++) {
      const result = await prepared.processRow(tx, index);
      if (result.outcome === 'created') created++;
      else if (result.outcome === 'updated') updated++;
      else rejections.push({ row: index, code: result.code, message: result.message, fields: result.fields });
    }
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

async function markImportFailed(importId: string): Promise<void> {
  await db
    .update(imports)
    .set({ status: 'failed', completedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(imports.updatedAt) })
    .where(and(eq(imports.id, importId), eq(imports.status, 'processing')));
}
