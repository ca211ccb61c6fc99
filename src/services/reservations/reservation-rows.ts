import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.js';
import { insertRows } from '../../db/insert-rows.js';
import { reservations } from '../../db/schema/index.js';
import type { ReservationRow } from './reservation-json.js';

/** Inserts one row and returns it (the hot write path: a prepared statement on the driver, insertRows). */
export async function insertRow<T extends PgTable>(conn: DbOrTx, table: T, values: T['$inferInsert']): Promise<T['$inferSelect']> {
  const [row] = await insertRows(conn, table, [values]);
  return row;
}

export function insertReservationRow(conn: DbOrTx, values: typeof reservations.$inferInsert): Promise<ReservationRow> {
  return insertRow(conn, reservations, values);
}
