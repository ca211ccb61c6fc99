import { getTableColumns, getTableName } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.js';
import { reservations } from '../../db/schema/index.js';
import { clientOf } from '../availability/venue-day-loader.js';
import type { ReservationRow } from './reservation-json.js';

/**
 * Inserts a row as a prepared statement (one round trip, planned once per connection, where
 * drizzle's insert describes and plans each time: bookings and holds are the hot write path), sent
 * at once so that it can be pipelined with the statements after it. Values and the returned row go
 * through the drizzle columns' own mappings, so the row is the one a drizzle insert would return.
 */
export async function insertRowPrepared<T extends PgTable>(conn: DbOrTx, table: T, values: T['$inferInsert']): Promise<T['$inferSelect']> {
  const columns = Object.entries(getTableColumns(table));
  const record: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = (values as Record<string, unknown>)[key];
    if (value !== undefined) record[column.name] = value === null ? null : column.mapToDriverValue(value);
  }
  const sql = clientOf(conn);
  const name: string = getTableName(table);
  const [raw] = await sql`insert into ${sql(name)} ${sql(record)} returning *`;
  return Object.fromEntries(columns.map(([key, column]) => [key, raw[column.name] === null ? null : column.mapFromDriverValue(raw[column.name])]));
}

export function insertReservationRow(conn: DbOrTx, values: typeof reservations.$inferInsert): Promise<ReservationRow> {
  return insertRowPrepared(conn, reservations, values);
}
