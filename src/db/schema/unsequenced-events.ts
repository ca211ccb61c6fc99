import { pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core';
import { instant } from './columns.js';

/**
 * The published events the event sequencer has still to number: a row is added with each published
 * event by a trigger on `events` (migration 0026, any insert path included) and removed by the run
 * that numbers it. A handful of rows at any time.
 */
export const unsequencedEvents = pgTable(
  'unsequenced_events',
  {
    organisationId: uuid('organisation_id').notNull(),
    createdAt: instant('created_at').notNull(),
    eventId: uuid('event_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organisationId, t.createdAt, t.eventId] })],
);
