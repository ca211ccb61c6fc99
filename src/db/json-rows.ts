import { getTableColumns, type Column } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';

const columnsOfTable = new WeakMap<PgTable, Array<[string, Column]>>();

/** A table's columns by their drizzle keys, listed once per table. */
export function columnsOf(table: PgTable): Array<[string, Column]> {
  let columns = columnsOfTable.get(table);
  if (!columns) {
    columns = Object.entries(getTableColumns(table));
    columnsOfTable.set(table, columns);
  }
  return columns;
}

/**
 * A row keyed by column name, as the driver reads a statement's columns or as PostgreSQL's `to_json`
 * gives a row (instants as ISO text, arrays and jsonb as JSON), decoded by the table's own columns
 * into the row drizzle would return: what insertRows and a statement that selects a row as one JSON
 * value give back.
 */
export function decodeJsonRow<T>(columns: ReadonlyArray<[string, Column]>, raw: Record<string, unknown>): T {
  const row: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = raw[column.name];
    row[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
  }
  return row as T;
}
