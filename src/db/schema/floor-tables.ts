import { boolean, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { areas } from './areas.js';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { floorPlans } from './floor-plans.js';
import { venues } from './venues.js';

/** The tables of a floor plan (`floor_tables`, to keep "tables" unambiguous in SQL). */
export const floorTables = pgTable(
  'floor_tables',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    floorPlanId: uuid('floor_plan_id')
      .notNull()
      .references(() => floorPlans.id),
    areaId: uuid('area_id')
      .notNull()
      .references(() => areas.id),
    name: text('name').notNull(),
    shape: text('shape').notNull().default('square'),
    minSeats: integer('min_seats').notNull(),
    maxSeats: integer('max_seats').notNull(),
    positionXCm: integer('position_x_cm').notNull().default(0),
    positionYCm: integer('position_y_cm').notNull().default(0),
    widthCm: integer('width_cm').notNull().default(80),
    heightCm: integer('height_cm').notNull().default(80),
    rotationDegrees: integer('rotation_degrees').notNull().default(0),
    isBlocked: boolean('is_blocked').notNull().default(false),
    /** Removed by a plan replace; kept so that past reservations still resolve. */
    deletedAt: instant('deleted_at'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index('floor_tables_plan_idx').on(t.floorPlanId, t.areaId, t.name), index('floor_tables_venue_idx').on(t.venueId)],
);
