import { boolean, customType, index, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { floorTables } from './floor-tables.js';
import { reservations } from './reservations.js';
import { venues } from './venues.js';

/** A PostgreSQL tstzrange, written and read as its text form `[start,end)`. */
const tstzrange = customType<{ data: string; driverData: string }>({ dataType: () => 'tstzrange' });

/**
 * Table occupancy: one row per table a reservation sits at. The exclusion constraint of migration
 * `reservation_tables_exclusion` (btree_gist) forbids two live rows of one table over overlapping
 * `during` ranges, whatever the number of API processes. `live` turns false when the reservation
 * frees its tables (released, completed, no_show, cancelled); the row stays to say where it sat.
 */
export const reservationTables = pgTable(
  'reservation_tables',
  {
    reservationId: uuid('reservation_id')
      .notNull()
      .references(() => reservations.id, { onDelete: 'cascade' }),
    tableId: uuid('table_id')
      .notNull()
      .references(() => floorTables.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** [startsAt, endsAt) of the reservation. */
    during: tstzrange('during').notNull(),
    live: boolean('live').notNull().default(true),
  },
  (t) => [primaryKey({ columns: [t.reservationId, t.tableId] }), index('reservation_tables_table_idx').on(t.tableId)],
);
