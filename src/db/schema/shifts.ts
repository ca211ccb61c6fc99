import { boolean, date, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { venues } from './venues.js';

export const shifts = pgTable(
  'shifts',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    name: text('name').notNull(),
    /** ISO days, 1 = Monday … 7 = Sunday. */
    daysOfWeek: integer('days_of_week').array().notNull(),
    /** HH:mm, venue local time. endTime before startTime: the shift runs past midnight. */
    startTime: text('start_time').notNull(),
    lastSeatingTime: text('last_seating_time').notNull(),
    endTime: text('end_time').notNull(),
    validFrom: date('valid_from', { mode: 'string' }),
    validTo: date('valid_to', { mode: 'string' }),
    isActive: boolean('is_active').notNull().default(true),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [index('shifts_venue_idx').on(t.venueId, t.createdAt, t.id), index('shifts_venue_updated_idx').on(t.venueId, t.updatedAt, t.id)],
);
