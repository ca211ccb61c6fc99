import { sql } from 'drizzle-orm';
import { boolean, index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant } from './columns.js';

/**
 * The outbox and the event history in one table: rows are written in the transaction of the
 * change they describe; `dispatchedAt` is set once worker-events has processed them. A published
 * event's stream position is in `event_positions`.
 */
export const events = pgTable(
  'events',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id').notNull(),
    venueId: uuid('venue_id').notNull(),
    type: text('type').notNull(),
    /** What the event is about, so that a webhook can carry its current state. */
    subjectType: text('subject_type', { enum: ['reservation', 'guest', 'waitlist_entry', 'none'] }).notNull(),
    subjectId: uuid('subject_id'),
    /** The `data` of the event as of the event time (GET /events). */
    data: jsonb('data').notNull().$type<Record<string, unknown>>(),
    livemode: boolean('livemode').notNull(),
    /** Who made the change (reservation history); null for events recorded before it was kept. */
    actor: jsonb('actor').$type<{ kind: 'api_key' | 'widget' | 'system' | 'import'; name: string }>(),
    /**
     * false: a history-only row (imports, which emit no events): never dispatched, listed or
     * streamed, read by the reservation history alone.
     */
    published: boolean('published').notNull().default(true),
    /**
     * The W3C headers of the span that committed the event, while tracing is on (null otherwise):
     * whichever process enqueues the event (its own, or the outbox sweep) hands its job this trace.
     */
    traceContext: jsonb('trace_context').$type<Record<string, string>>(),
    createdAt: createdAtColumn(),
    dispatchedAt: instant('dispatched_at'),
  },
  (t) => [
    index('events_venue_created_idx').on(t.venueId, t.createdAt, t.id),
    index('events_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    // GET /events?type=…: a rare type must not scan the organisation's whole history.
    index('events_org_type_created_idx').on(t.organisationId, t.type, t.createdAt, t.id),
    index('events_venue_type_created_idx').on(t.venueId, t.type, t.createdAt, t.id),
    index('events_subject_created_idx').on(t.subjectId, t.createdAt, t.id),
    index('events_undispatched_idx')
      .on(t.createdAt)
      .where(sql`${t.dispatchedAt} is null`),
  ],
);
