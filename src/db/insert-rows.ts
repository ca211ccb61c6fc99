import { getTableColumns, getTableName, type Column } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { driverOf, type DbOrTx } from './client.js';

const columnsOfTable = new WeakMap<PgTable, Array<[string, Column]>>();

function columnsOf(table: PgTable): Array<[string, Column]> {
  let columns = columnsOfTable.get(table);
  if (!columns) {
    columns = Object.entries(getTableColumns(table));
    columnsOfTable.set(table, columns);
  }
  return columns;
}

/**
 * Inserts rows with one prepared statement sent straight to the driver (planned once per connection)
 * and returns them as drizzle's insert … returning() would: values encoded and rows decoded by the
 * table's own columns, a missing id taken from its default function. For the hot write path
 * (bookings, holds, their tables): drizzle's insert builder cost about a quarter of a millisecond of
 * CPU per booking (docs/architecture.md "Write path"). `onConflictDoNothing` leaves out the rows a
 * constraint refused. Statements given together (Promise.all) are pipelined on the connection.
 */
export async function insertRows<T extends PgTable>(
  conn: DbOrTx,
  table: T,
  rows: readonly T['$inferInsert'][],
  options: { onConflictDoNothing?: boolean } = {},
): Promise<T['$inferSelect'][]> {
  const columns = columnsOf(table);
  const given = columns.filter(([key, column]) => column.defaultFn || rows.some((row) => (row as Record<string, unknown>)[key] !== undefined));
  const params: unknown[] = [];
  const tuples = rows.map((row) => {
    const values = given.map(([key, column]) => {
      let value = (row as Record<string, unknown>)[key];
      if (value === undefined && column.defaultFn) value = column.defaultFn();
      if (value === undefined) return 'default';
      params.push(value === null ? null : column.mapToDriverValue(value));
      return `$${params.length}`;
    });
    return `(${values.join(', ')})`;
  });
  const text =
    `insert into "${getTableName(table)}" (${given.map(([, column]) => `"${column.name}"`).join(', ')}) values ${tuples.join(', ')}` +
    `${options.onConflictDoNothing ? ' on conflict do nothing' : ''} returning *`;
  const inserted = await driverOf(conn).unsafe<Array<Record<string, unknown>>>(text, params as never[], { prepare: true });
  return inserted.map((raw) => {
    const row: Record<string, unknown> = {};
    for (const [key, column] of columns) row[key] = raw[column.name] === null ? null : column.mapFromDriverValue(raw[column.name]);
    return row as T['$inferSelect'];
  });
}
