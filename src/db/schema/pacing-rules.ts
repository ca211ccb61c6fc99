import { boolean, index, integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { shifts } from './shifts.js';
import { venues } from './venues.js';

export const pacingRules = pgTable(
  'pacing_rules',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    shiftId: uuid('shift_id')
      .notNull()
      .references(() => shifts.id, { onDelete: 'cascade' }),
    isEnabled: boolean('is_enabled').notNull().default(true),
    maxCovers: integer('max_covers').notNull(),
    windowMinutes: integer('window_minutes').notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index('pacing_rules_venue_idx').on(t.venueId, t.createdAt, t.id),
    index('pacing_rules_venue_updated_idx').on(t.venueId, t.updatedAt, t.id),
  ],
);
