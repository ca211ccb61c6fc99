import { z } from 'zod';
import type { imports } from '../../db/schema/index.js';
import { component, count, instant, uuid } from '../../core/response-schemas.js';

export type ImportRow = typeof imports.$inferSelect;
export type ImportKind = ImportRow['kind'];

export const importSchema = component(
  'Import',
  z.object({
    id: uuid,
    kind: z.enum(['guests', 'reservations']),
    status: z.enum(['processing', 'completed', 'failed', 'dry_run']).describe('dry_run: the answer of ?dryRun=true, never stored'),
    totalRows: count,
    createdRows: count,
    updatedRows: count,
    rejectedRows: count,
    rejections: z.array(
      z.object({
        row: count.describe('0-based index in `rows`'),
        code: z.enum(['invalid_field', 'venue_not_found', 'invalid_phone', 'duplicate_row']),
        message: z.string(),
        fields: z.array(z.string()),
      }),
    ),
    createdAt: instant,
    completedAt: instant.nullable(),
  }),
  'An import record (docs/api.md).',
);

/** Exactly the Import record of docs/api.md; progress (processedRows) and the rows stay internal. */
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
