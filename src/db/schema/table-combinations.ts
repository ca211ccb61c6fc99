import { index, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { floorPlans } from './floor-plans.js';
import { venues } from './venues.js';

/** A union of tables of one area, seating max(minSeats) … sum(maxSeats). */
export const tableCombinations = pgTable(
  'table_combinations',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    floorPlanId: uuid('floor_plan_id')
      .notNull()
      .references(() => floorPlans.id),
    tableIds: uuid('table_ids').array().notNull(),
    deletedAt: instant('deleted_at'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index('table_combinations_plan_idx').on(t.floorPlanId)],
);
