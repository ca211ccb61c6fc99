import type { PgTable } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.js';
import { insertRows } from '../../db/insert-rows.js';
import { reservations } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { violatedUniqueIndex } from '../../lib/unique-violation.js';
import type { ReservationRow } from './reservation-json.js';

/** Inserts one row and returns it (the hot write path: a prepared statement on the driver, insertRows). */
export async function insertRow<T extends PgTable>(conn: DbOrTx, table: T, values: T['$inferInsert']): Promise<T['$inferSelect']> {
  const [row] = await insertRows(conn, table, [values]);
  return row;
}

export function insertReservationRow(conn: DbOrTx, values: typeof reservations.$inferInsert): Promise<ReservationRow> {
  return insertRow(conn, reservations, values);
}

/** A write of a reservation row that broke the venue's unique externalRef: 409 conflict naming the field; any other error as it is. */
export function externalRefConflict(err: unknown): unknown {
  if (violatedUniqueIndex(err) === 'reservations_venue_external_ref_idx') {
    return new ApiError('conflict', 'Another reservation of this venue has this externalRef.', { fields: ['externalRef'] });
  }
  return err;
}
