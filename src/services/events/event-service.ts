import { and, eq, gte, lte, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { db, type Db } from '../../db/client.js';
import { readTolerantOfLag } from '../../db/read-replica.js';
import { events } from '../../db/schema/index.js';
import { hasScope, type AuthContext } from '../../core/auth-context.js';
import { filterEnvelopeForReader, type PayloadReader } from '../../lib/webhook-payload-filter.js';
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
export function fetchEventPage(query: ListQuery, where: SQL | undefined, conn: Db = db()) {
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
    data: component(
      'GuestEventData',
      z.object({ guest: guestSchema, reason: z.enum(['guest_created', 'profile_changed', 'service_tags_changed']) }),
    ),
  },
  { types: ['webhook_test'] as const, data: component('TestEventData', z.object({})) },
];

/** Operator events are listed and streamed but never sent as webhooks, hence not among eventDataGroups. */
const operatorEventGroup = {
  types: operatorEventTypes,
  data: component(
    'WebhookEndpointEventData',
    z.object({ webhookEndpoint: webhookEndpointSchema }),
    'The destination as GET /webhook-endpoints/{id} returned it just after the change.',
  ),
};

const idOnly = z.object({ id: uuid.nullable() });

/** A reservation as a reader without guests:read sees it in a payload (filterEnvelopeForReader): its guest reduced to the id. */
export const payloadReservationSchema = component(
  'PayloadReservation',
  reservationSchema.extend({
    guest: reservationSchema.shape.guest.or(idOnly.nullable()),
    guestDetails: reservationSchema.shape.guestDetails.or(idOnly.nullable()),
  }),
  'A reservation in an event or webhook payload: without guests:read its guest and guestDetails are reduced to {id}.',
);

/** The `data` of each group as a reader sees it (filterEnvelopeForReader): guest data reduced by scope. */
export const readerEventDataGroups = [
  { types: reservationEventTypes, data: component('PayloadReservationEventData', z.object({ reservation: payloadReservationSchema })) },
  eventDataGroups[1],
  {
    types: eventDataGroups[2].types,
    data: component(
      'PayloadGuestEventData',
      z.object({ guest: guestSchema.or(idOnly), reason: z.enum(['guest_created', 'profile_changed', 'service_tags_changed']) }),
      'Without guests:read the guest is reduced to {id}.',
    ),
  },
];

/** One item of GET /events: the event and its data as of the event time, guest data as the reader's scopes allow. */
export const eventSchema = component(
  'Event',
  z.union(
    [...readerEventDataGroups, operatorEventGroup].map((g) =>
      z.object({ id: uuid, type: z.enum(g.types), venueId: uuid, createdAt: instant, data: g.data }),
    ),
  ),
  'An event of the history; its id is the eventId of the webhook envelopes that carry it.',
);

/** What a key may see of event and webhook payloads: the scopes that reveal guests and reservations. */
export function payloadReaderOf(auth: AuthContext): PayloadReader {
  return { guests: hasScope(auth, 'guests:read'), reservations: hasScope(auth, 'reservations:read') || hasScope(auth, 'events:read') };
}

/**
 * An event as `reader` may see it (GET /events and the live stream): guest data reduced by scope
 * exactly as in the webhook payloads GET /webhook-deliveries shows.
 */
export function eventJson(e: EventRow, reader: PayloadReader) {
  return filterEnvelopeForReader(
    { id: e.id, type: e.type, venueId: e.venueId, createdAt: e.createdAt.toISOString(), data: e.data },
    reader,
  );
}
