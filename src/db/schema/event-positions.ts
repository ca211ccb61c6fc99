import { bigint, pgTable, primaryKey, uniqueIndex, uuid } from 'drizzle-orm/pg-core';

/**
 * Commit order within an organisation (GET /events/stream): the position the event sequencer gave
 * each published event after its commit (src/services/outbox/event-sequencer.ts). A table of its own,
 * written once per event, so that numbering never rewrites the wide event row and its indexes.
 */
export const eventPositions = pgTable(
  'event_positions',
  {
    organisationId: uuid('organisation_id').notNull(),
    position: bigint('position', { mode: 'number' }).notNull(),
    eventId: uuid('event_id').notNull(),
  },
  (t) => [primaryKey({ columns: [t.organisationId, t.position] }), uniqueIndex('event_positions_event_idx').on(t.eventId)],
);
