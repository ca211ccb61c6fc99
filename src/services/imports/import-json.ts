import type { imports } from '../../db/schema/index.js';

export type ImportRow = typeof imports.$inferSelect;
export type ImportKind = ImportRow['kind'];

/** Import record of interface.md §2 (plus processedRows, the progress, and updatedAt); the rows themselves are not echoed. */
export function importJson(r: ImportRow) {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    totalRows: r.totalRows,
    processedRows: r.processedRows,
    createdRows: r.createdRows,
    updatedRows: r.updatedRows,
    rejectedRows: r.rejectedRows,
    rejections: r.rejections,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
    updatedAt: r.updatedAt.toISOString(),
  };
}
