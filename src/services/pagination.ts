import { asc, sql, type SQL } from 'drizzle-orm';
import type { AnyPgColumn } from 'drizzle-orm/pg-core';
import { z } from 'zod';
import { ApiError } from '../core/errors.js';
import { instantParam } from '../core/validation.js';
import { decodeCursor, encodeCursor, type CursorValue } from '../lib/cursor.js';

export const defaultPageSize = 50;

/** limit, cursor and changedAfter: the list parameters every list endpoint takes. */
export const listQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(defaultPageSize),
  cursor: z.string().min(1).max(2000).optional(),
  changedAfter: instantParam.optional(),
});
/** The list parameters, and the key its cursors are sealed with (SECRETS_KEY's, handed on by the route). */
export type ListQuery = z.output<typeof listQuerySchema> & { cursorKey: Buffer };

export interface SortKey<Row> {
  column: AnyPgColumn | SQL;
  kind: 'instant' | 'text' | 'number';
  read: (row: Row) => Date | string | number;
}

export interface PageSpec<Row extends { id: string }> {
  query: ListQuery;
  idColumn: AnyPgColumn;
  /** The natural order of the list (ascending), id breaks ties. */
  naturalOrder: SortKey<Row>[];
  /** Required for changedAfter: the row's updatedAt. */
  updatedAt?: SortKey<Row>;
  /** Runs the query with the keyset filter (or undefined), the order and the row count to fetch. */
  fetch: (keyset: SQL | undefined, orderBy: SQL[], limit: number) => Promise<Row[]>;
}

export interface Page<Row> {
  rows: Row[];
  nextCursor: string | null;
}

function toCursorValue(value: Date | string | number): CursorValue {
  return value instanceof Date ? value.toISOString() : value;
}

function fromCursorValue(value: CursorValue, kind: SortKey<unknown>['kind']): SQL {
  if (kind === 'instant') {
    const date = typeof value === 'string' ? new Date(value) : null;
    if (!date || Number.isNaN(date.getTime())) throw ApiError.invalid(['cursor'], 'The cursor is invalid.');
    return sql`${date.toISOString()}::timestamptz`;
  }
  if (kind === 'number') {
    if (typeof value !== 'number') throw ApiError.invalid(['cursor'], 'The cursor is invalid.');
    return sql`${value}::numeric`;
  }
  return sql`${String(value)}::text`;
}

/** Keyset pagination: stable while rows are inserted, no duplicates or gaps between pages. */
export async function fetchPage<Row extends { id: string }>(spec: PageSpec<Row>): Promise<Page<Row>> {
  const { query } = spec;
  const changedMode = query.changedAfter !== undefined;
  if (changedMode && !spec.updatedAt) throw ApiError.invalid(['changedAfter'], 'This list does not support changedAfter.');
  const keys = changedMode ? [spec.updatedAt!] : spec.naturalOrder;
  const mode = changedMode ? 'changed' : 'natural';

  const conditions: SQL[] = [];
  if (changedMode) conditions.push(sql`${spec.updatedAt!.column} > ${query.changedAfter!.toISOString()}::timestamptz`);
  if (query.cursor) {
    const position = decodeCursor(query.cursor, query.cursorKey);
    if (!position || position.mode !== mode || position.values.length !== keys.length || !z.uuid().safeParse(position.id).success) {
      throw ApiError.invalid(['cursor'], 'The cursor is invalid.');
    }
    const left = sql.join([...keys.map((k) => sql`${k.column}`), sql`${spec.idColumn}`], sql`, `);
    const right = sql.join([...position.values.map((v, i) => fromCursorValue(v, keys[i].kind)), sql`${position.id}::uuid`], sql`, `);
    conditions.push(sql`(${left}) > (${right})`);
  }
  const keyset = conditions.length ? sql.join(conditions, sql` and `) : undefined;
  const orderBy = [...keys.map((k) => asc(k.column as AnyPgColumn)), asc(spec.idColumn)];
  const rows = await spec.fetch(keyset, orderBy, query.limit + 1);
  const hasMore = rows.length > query.limit;
  const pageRows = hasMore ? rows.slice(0, query.limit) : rows;
  const last = pageRows[pageRows.length - 1];
  const nextCursor =
    hasMore && last ? encodeCursor({ mode, values: keys.map((k) => toCursorValue(k.read(last))), id: last.id }, query.cursorKey) : null;
  return { rows: pageRows, nextCursor };
}
