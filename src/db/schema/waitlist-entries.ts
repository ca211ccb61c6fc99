import { sql } from 'drizzle-orm';
import { date, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { guests } from './guests.js';
import { organisations } from './organisations.js';
import { reservations } from './reservations.js';
import { venues } from './venues.js';

export const waitlistStatusValues = ['waiting', 'notified', 'converted', 'cancelled', 'expired'] as const;

/** The waiting list of a venue's serviceDate (docs/operations.md "Waiting list"): parties waiting for a seat, in `position` order. */
export const waitlistEntries = pgTable(
  'waitlist_entries',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    serviceDate: date('service_date', { mode: 'string' }).notNull(),
    partySize: integer('party_size').notNull(),
    guestId: uuid('guest_id').references(() => guests.id, { onDelete: 'set null' }),
    name: text('name'),
    /** E.164. */
    phone: text('phone'),
    notes: text('notes'),
    status: text('status', { enum: waitlistStatusValues }).notNull().default('waiting'),
    /** Arrival order within the venue's serviceDate, from 1; never reused, so the queue order is stable. */
    position: integer('position').notNull(),
    quotedWaitMinutes: integer('quoted_wait_minutes'),
    /**
     * The platform's estimate of when the party sits (docs/reservations.md "Turn times and wait quotes"),
     * recomputed by worker-events when the floor changes; all three null when none can be given.
     */
    estimatedSeatFrom: instant('estimated_seat_from'),
    estimatedSeatTo: instant('estimated_seat_to'),
    estimatedWaitMinutes: integer('estimated_wait_minutes'),
    notifiedAt: instant('notified_at'),
    reservationId: uuid('reservation_id').references(() => reservations.id, { onDelete: 'set null' }),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex('waitlist_entries_venue_day_position_idx').on(t.venueId, t.serviceDate, t.position),
    index('waitlist_entries_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('waitlist_entries_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
    // The entries still in the queue, by venue: a venue's queue, whether anybody waits there (read with
    // every batch of events) and compatible_table_freed read that venue's entries alone, whatever the
    // queues of the platform's other venues hold; the expiry timer reads the index whole (it holds
    // only the queues not yet over).
    index('waitlist_entries_active_idx')
      .on(t.venueId, t.serviceDate)
      .where(sql`${t.status} in ('waiting', 'notified')`),
  ],
);
