import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.js';
import { reservations } from '../../db/schema/index.js';
import type { ReservationRow } from './reservation-json.js';

/**
 * Inserts one row and returns it, as a prepared statement (bookings and holds are the hot write path:
 * planned once per connection). The statement is sent when the promise is first awaited, so a caller
 * that awaits it together with the next statements (Promise.all) pipelines them in one round trip.
 */
export async function insertRow<T extends PgTable>(conn: DbOrTx, table: T, values: T['$inferInsert']): Promise<T['$inferSelect']> {
  const [row] = (await conn.insert(table).values(values).returning().prepare('insert_row').execute()) as T['$inferSelect'][];
  return row;
}

export function insertReservationRow(conn: DbOrTx, values: typeof reservations.$inferInsert): Promise<ReservationRow> {
  return insertRow(conn, reservations, values);
}
