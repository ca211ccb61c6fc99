import { sql } from 'drizzle-orm';
import { boolean, date, index, integer, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { guests } from './guests.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

export const reservationStatusValues = [
  'created',
  'confirmed',
  'arrived',
  'seated',
  'released',
  'completed',
  'no_show',
  'cancelled',
] as const;
export const reservationSourceValues = ['phone', 'voice_agent', 'floor', 'waitlist', 'walk_in', 'api', 'import'] as const;

export const reservations = pgTable(
  'reservations',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** Venue-local date the reservation belongs to (a past-midnight time keeps its shift's date). */
    serviceDate: date('service_date', { mode: 'string' }).notNull(),
    /** HH:mm, venue local. */
    time: text('time').notNull(),
    startsAt: instant('starts_at').notNull(),
    endsAt: instant('ends_at').notNull(),
    partySize: integer('party_size').notNull(),
    status: text('status', { enum: reservationStatusValues }).notNull(),
    /** The table or combination chosen; both null when none (the rows of reservation_tables say which tables). */
    tableId: uuid('table_id'),
    tableCombinationId: uuid('table_combination_id'),
    tableAssigned: boolean('table_assigned').notNull().default(false),
    /** The table was chosen explicitly: the table optimiser never moves it. */
    tableLocked: boolean('table_locked').notNull().default(false),
    needsAttention: boolean('needs_attention').notNull().default(false),
    notes: text('notes'),
    source: text('source', { enum: reservationSourceValues }).notNull(),
    sourceDetail: text('source_detail'),
    externalRef: text('external_ref'),
    guestId: uuid('guest_id').references(() => guests.id, { onDelete: 'set null' }),
    arrivedAt: instant('arrived_at'),
    seatedAt: instant('seated_at'),
    /** When its tables were freed by a release or a completion. */
    freedAt: instant('freed_at'),
    completedAt: instant('completed_at'),
    noShowAt: instant('no_show_at'),
    cancelledAt: instant('cancelled_at'),
    /** reservation_late is emitted once: the timer sets this when it does. */
    lateNotifiedAt: instant('late_notified_at'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index('reservations_venue_date_idx').on(t.venueId, t.serviceDate),
    index('reservations_venue_starts_idx').on(t.venueId, t.startsAt, t.id),
    index('reservations_org_starts_idx').on(t.organisationId, t.startsAt, t.id),
    index('reservations_venue_updated_idx').on(t.venueId, t.updatedAt, t.id),
    index('reservations_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
    // GET /reservations?status=<one status>, by startsAt: without the status in the key, a page of a
    // rare status (cancelled, confirmed) reads every row of other statuses before it, a number that
    // grows with the history.
    index('reservations_venue_status_starts_idx').on(t.venueId, t.status, t.startsAt, t.id),
    index('reservations_org_status_starts_idx').on(t.organisationId, t.status, t.startsAt, t.id),
    uniqueIndex('reservations_venue_external_ref_idx')
      .on(t.venueId, t.externalRef)
      .where(sql`${t.externalRef} is not null`),
    index('reservations_guest_idx').on(t.guestId),
    // Seated parties past their end keep their tables: the availability load looks them up here.
    index('reservations_seated_idx')
      .on(t.venueId, t.endsAt)
      .where(sql`${t.status} = 'seated'`),
    // The late / no-show timer scans reservations still expected.
    index('reservations_expected_idx')
      .on(t.startsAt)
      .where(sql`${t.status} in ('created', 'confirmed')`),
  ],
);
