import { date, jsonb, pgTable, uuid } from 'drizzle-orm/pg-core';
import type { TurnTimeStats } from '../../lib/learned-turn-times.js';
import { updatedAtColumn } from './columns.js';
import { venues } from './venues.js';

/**
 * What a venue's completed reservations of the last 8 weeks say about its turn times
 * (docs/reservations.md "Turn times and wait quotes"): sample counts, p50 and p80 per party-size band,
 * shift and day of week, and the same per band and shift over all days and per band alone, which the
 * cells below 12 samples borrow. Rewritten by the timer task learn-turn-times from those 8 weeks only, so
 * reading it costs the same whatever the length of the history.
 */
export const learnedTurnTimes = pgTable('learned_turn_times', {
  venueId: uuid('venue_id')
    .primaryKey()
    .references(() => venues.id),
  stats: jsonb('stats').$type<TurnTimeStats>().notNull(),
  /** The venue-local date the 8 weeks end on: a new day moves the window. */
  learnedForDate: date('learned_for_date', { mode: 'string' }).notNull(),
  updatedAt: updatedAtColumn(),
});
