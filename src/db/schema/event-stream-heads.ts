import { bigint, pgTable, uuid } from 'drizzle-orm/pg-core';

/**
 * The last stream position given to an organisation's events (GET /events/stream). Written only by
 * the event sequencer (src/services/outbox/event-sequencer.ts), one run at a time per organisation.
 */
export const eventStreamHeads = pgTable('event_stream_heads', {
  organisationId: uuid('organisation_id').primaryKey(),
  position: bigint('position', { mode: 'number' }).notNull(),
});
