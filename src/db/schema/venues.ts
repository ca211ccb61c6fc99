import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';

export const tableOptimisationValues = ['off', 'on'] as const;
export const turnTimeSourceValues = ['configured', 'learned'] as const;

export const venues = pgTable(
  'venues',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    name: text('name').notNull(),
    timezone: text('timezone').notNull(),
    countryCode: text('country_code').notNull(),
    slotIntervalMinutes: integer('slot_interval_minutes').notNull().default(15),
    bookingHorizonDays: integer('booking_horizon_days').notNull().default(90),
    minNoticeMinutes: integer('min_notice_minutes').notNull().default(0),
    lateToleranceMinutes: integer('late_tolerance_minutes').notNull().default(15),
    noShowToleranceMinutes: integer('no_show_tolerance_minutes').default(45),
    /** Whether the engine may move unlocked parties to other tables to seat a booking. */
    tableOptimisation: text('table_optimisation', { enum: tableOptimisationValues }).notNull().default('on'),
    /** Where a party's turn time comes from: the configured rules, or the p50 learned from the venue's history (learned_turn_times). */
    turnTimeSource: text('turn_time_source', { enum: turnTimeSourceValues }).notNull().default('configured'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index('venues_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('venues_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
  ],
);
