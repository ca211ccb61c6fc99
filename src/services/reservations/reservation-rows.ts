import { getTableColumns } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { reservations } from '../../db/schema/index.js';
import { clientOf } from '../availability/venue-day-loader.js';
import type { ReservationRow } from './reservation-json.js';

const columns = Object.entries(getTableColumns(reservations));

/**
 * Inserts a reservation as a prepared statement (one round trip, planned once per connection,
 * where drizzle's insert describes and plans each time: bookings are the hot write path). Values
 * and the returned row go through the drizzle columns' own mappings, so the row is the one a
 * drizzle insert would return.
 */
export async function insertReservationRow(conn: DbOrTx, values: typeof reservations.$inferInsert): Promise<ReservationRow> {
  const record: Record<string, unknown> = {};
  for (const [key, column] of columns) {
    const value = (values as Record<string, unknown>)[key];
    if (value !== undefined) record[column.name] = value === null ? null : column.mapToDriverValue(value);
  }
  const sql = clientOf(conn);
  const [raw] = await sql`insert into reservations ${sql(record)} returning *`;
  return Object.fromEntries(columns.map(([key, column]) => [key, raw[column.name] === null ? null : column.mapFromDriverValue(raw[column.name])])) as ReservationRow;
}
