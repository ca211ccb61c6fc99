import type { imports } from '../../db/schema/index.js';

export type ImportRow = typeof imports.$inferSelect;
export type ImportKind = ImportRow['kind'];

/** Exactly the Import record of interface.md §2; progress (processedRows) and the rows stay internal. */
export function importJson(r: ImportRow) {
  return {
    id: r.id,
    kind: r.kind,
    status: r.status,
    totalRows: r.totalRows,
    createdRows: r.createdRows,
    updatedRows: r.updatedRows,
    rejectedRows: r.rejectedRows,
    rejections: r.rejections,
    createdAt: r.createdAt.toISOString(),
    completedAt: r.completedAt?.toISOString() ?? null,
  };
}
