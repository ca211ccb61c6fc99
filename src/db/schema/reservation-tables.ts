import { sql } from 'drizzle-orm';
import { boolean, check, customType, index, pgTable, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { availabilityHolds } from './availability-holds.js';
import { instant } from './columns.js';
import { floorTables } from './floor-tables.js';
import { reservations } from './reservations.js';
import { venues } from './venues.js';

/** A PostgreSQL tstzrange, written and read as its text form `[start,end)`. */
const tstzrange = customType<{ data: string; driverData: string }>({ dataType: () => 'tstzrange' });

/**
 * Table occupancy: one row per table a reservation — or a slot hold — sits at. The exclusion
 * constraint of migration `reservation_tables_exclusion` (btree_gist) forbids two live rows of one
 * table over overlapping `during` ranges, whatever the number of API processes. `live` turns false
 * when the reservation frees its tables (released, completed, no_show, cancelled); the row stays to
 * say where it sat. A hold's rows carry its `expiresAt`: from then on they are dead, and a trigger
 * deletes them before any row that overlaps them is written (migration `availability_holds`).
 */
export const reservationTables = pgTable(
  'reservation_tables',
  {
    /** The reservation, or null for a hold's row. */
    reservationId: uuid('reservation_id').references(() => reservations.id, { onDelete: 'cascade' }),
    holdId: uuid('hold_id').references(() => availabilityHolds.id, { onDelete: 'cascade' }),
    tableId: uuid('table_id')
      .notNull()
      .references(() => floorTables.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** [startsAt, endsAt) of the reservation. */
    during: tstzrange('during').notNull(),
    live: boolean('live').notNull().default(true),
    /** A hold's rows only: when the hold lapses. */
    expiresAt: instant('expires_at'),
  },
  (t) => [
    uniqueIndex('reservation_tables_reservation_table_idx').on(t.reservationId, t.tableId),
    uniqueIndex('reservation_tables_hold_table_idx').on(t.holdId, t.tableId),
    index('reservation_tables_table_idx').on(t.tableId),
    check(
      'reservation_tables_one_owner',
      sql`(${t.reservationId} is null) <> (${t.holdId} is null) and (${t.holdId} is null) = (${t.expiresAt} is null)`,
    ),
  ],
);
