import { boolean, date, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { createdAtColumn, idColumn, instant } from './columns.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

/**
 * A slot hold (docs/reservations.md "Slot holds"): a table kept for a party while the guest confirms. Its tables are
 * occupied by rows of reservation_tables (hold_id set, expires_at copied), under the same exclusion
 * constraint as reservations. A released or consumed hold is deleted (its occupancy goes with it);
 * an expired one stays until a later hold of that venue day or the daily purge removes it, but
 * occupies nothing from its expiresAt on (see migration `availability_holds`).
 */
export const availabilityHolds = pgTable(
  'availability_holds',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** The key that made it: only that key reads, releases or books it. */
    apiKeyId: uuid('api_key_id')
      .notNull()
      .references(() => apiKeys.id),
    /** Publishable keys: the caller's IP, for the limit of live holds per caller. */
    callerIp: text('caller_ip'),
    serviceDate: date('service_date', { mode: 'string' }).notNull(),
    /** HH:mm, venue local. */
    time: text('time').notNull(),
    partySize: integer('party_size').notNull(),
    startsAt: instant('starts_at').notNull(),
    endsAt: instant('ends_at').notNull(),
    turnTimeMinutes: integer('turn_time_minutes').notNull(),
    /** The table or combination held (exactly one of them). */
    tableId: uuid('table_id'),
    tableCombinationId: uuid('table_combination_id'),
    seats: integer('seats').notNull(),
    overflowsShift: boolean('overflows_shift').notNull(),
    expiresAt: instant('expires_at').notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    index('availability_holds_venue_date_idx').on(t.venueId, t.serviceDate),
    index('availability_holds_caller_idx').on(t.apiKeyId, t.callerIp),
    index('availability_holds_expires_idx').on(t.expiresAt),
  ],
);
