import { and, eq, gte, lte, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { db, type Db } from '../../db/client.js';
import { readTolerantOfLag } from '../../db/read-replica.js';
import { events } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { operatorEventTypes, reservationEventTypes } from '../../lib/event-catalogue.js';
import { webhookEndpointSchema } from '../webhooks/webhook-endpoint-json.js';
import { guestSchema } from '../guests/guest-json.js';
import { reservationSchema } from '../reservations/reservation-json.js';
import { waitlistEntrySchema } from '../waitlist/waitlist-json.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';

type EventRow = typeof events.$inferSelect;

export interface EventFilters {
  venueId?: string;
  type?: string;
  from?: Date;
  to?: Date;
}

/** A page of the events matching `where`, oldest first (createdAt, id); events never change, so changedAfter reads createdAt. */
/** `conn`: the primary, or the replica for reads that tolerate lag (listEvents). */
export function fetchEventPage(query: ListQuery, where: SQL | undefined, conn: Db = db) {
  const createdAt = { column: events.createdAt, kind: 'instant' as const, read: (e: EventRow) => e.createdAt };
  return fetchPage<EventRow>({
    query,
    idColumn: events.id,
    naturalOrder: [createdAt],
    updatedAt: createdAt,
    fetch: (keyset, orderBy, limit) =>
      conn
        .select()
        .from(events)
        .where(and(where, keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/** The event history (docs/webhooks.md): data as of the event time, oldest first. */
export async function listEvents(auth: AuthContext, query: ListQuery & EventFilters) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  // A page of past events tolerates the replica's lag (docs/operations.md "Running on several machines").
  const where = and(
    eq(events.organisationId, auth.organisationId),
    eq(events.published, true),
    visibleVenueIds(auth, events.venueId),
    query.venueId ? eq(events.venueId, query.venueId) : undefined,
    query.type ? eq(events.type, query.type) : undefined,
    query.from ? gte(events.createdAt, query.from) : undefined,
    query.to ? lte(events.createdAt, query.to) : undefined,
  );
  return readTolerantOfLag((conn) => fetchEventPage(query, where, conn));
}

/** The `data` of each group of event types (docs/webhooks.md catalogue). */
export const eventDataGroups = [
  { types: reservationEventTypes, data: component('ReservationEventData', z.object({ reservation: reservationSchema })) },
  {
    types: ['waitlist_entry_created', 'waitlist_entry_cancelled', 'compatible_table_freed'] as const,
    data: component('WaitlistEventData', z.object({ waitlistEntry: waitlistEntrySchema })),
  },
  {
    types: ['guest_profile_changed'] as const,
    data: component('GuestEventData', z.object({ guest: guestSchema, reason: z.enum(['guest_created', 'profile_changed', 'service_tags_changed']) })),
  },
  { types: ['webhook_test'] as const, data: component('TestEventData', z.object({})) },
];

/** Operator events are listed and streamed but never sent as webhooks, hence not among eventDataGroups. */
const operatorEventGroup = {
  types: operatorEventTypes,
  data: component('WebhookEndpointEventData', z.object({ webhookEndpoint: webhookEndpointSchema }), 'The destination as GET /webhook-endpoints/{id} returned it just after the change.'),
};

/** One item of GET /events: the event and its data as of the event time. */
export const eventSchema = component(
  'Event',
  z.union(
    [...eventDataGroups.filter((g) => !g.types.includes('webhook_test' as never)), operatorEventGroup].map((g) =>
      z.object({ id: uuid, type: z.enum(g.types), venueId: uuid, createdAt: instant, data: g.data }),
    ),
  ),
  'An event of the history; its id is the eventId of the webhook envelopes that carry it.',
);

export function eventJson(e: EventRow) {
  return { id: e.id, type: e.type, venueId: e.venueId, createdAt: e.createdAt.toISOString(), data: e.data };
}
