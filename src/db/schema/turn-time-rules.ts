import { index, integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { shifts } from './shifts.js';
import { venues } from './venues.js';

export const turnTimeRules = pgTable(
  'turn_time_rules',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** null: venue-wide; a shift-specific rule covering the party wins over a venue-wide one. */
    shiftId: uuid('shift_id').references(() => shifts.id, { onDelete: 'cascade' }),
    minPartySize: integer('min_party_size').notNull(),
    maxPartySize: integer('max_party_size').notNull(),
    durationMinutes: integer('duration_minutes').notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index('turn_time_rules_venue_idx').on(t.venueId, t.createdAt, t.id),
    index('turn_time_rules_venue_updated_idx').on(t.venueId, t.updatedAt, t.id),
  ],
);
