import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { floorPlans } from './floor-plans.js';
import { venues } from './venues.js';

export const areas = pgTable(
  'areas',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    floorPlanId: uuid('floor_plan_id')
      .notNull()
      .references(() => floorPlans.id),
    name: text('name').notNull(),
    icon: text('icon').notNull().default('room'),
    position: integer('position').notNull().default(0),
    widthCm: integer('width_cm').notNull(),
    heightCm: integer('height_cm').notNull(),
    /** Removed by a plan replace; kept so that past reservations still resolve. */
    deletedAt: instant('deleted_at'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index('areas_plan_idx').on(t.floorPlanId, t.position, t.id)],
);
