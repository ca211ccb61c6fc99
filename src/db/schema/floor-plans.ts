import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { venues } from './venues.js';

export const floorPlans = pgTable(
  'floor_plans',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    name: text('name').notNull(),
    isActive: boolean('is_active').notNull().default(false),
    version: integer('version').notNull().default(1),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    // Exactly one active plan per venue, even when two activations race.
    uniqueIndex('floor_plans_one_active_idx')
      .on(t.venueId)
      .where(sql`${t.isActive}`),
    index('floor_plans_venue_idx').on(t.venueId, t.createdAt, t.id),
  ],
);
