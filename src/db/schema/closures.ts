import { date, index, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { venues } from './venues.js';

export const closures = pgTable(
  'closures',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** Inclusive date range, venue local dates. */
    from: date('from', { mode: 'string' }).notNull(),
    to: date('to', { mode: 'string' }).notNull(),
    /** Empty: the whole day is closed. */
    shiftIds: uuid('shift_ids').array().notNull().default([]),
    reason: text('reason'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index('closures_venue_idx').on(t.venueId, t.from, t.id), index('closures_venue_updated_idx').on(t.venueId, t.updatedAt, t.id)],
);
