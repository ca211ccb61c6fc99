import { and, eq, gte, lte } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import type { AuthContext } from '../../http/auth.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';

type EventRow = typeof events.$inferSelect;

export interface EventFilters {
  venueId?: string;
  type?: string;
  from?: Date;
  to?: Date;
}

/** The event history (decisions §12): data as of the event time, oldest first; events never change, so changedAfter reads createdAt. */
export async function listEvents(auth: AuthContext, query: ListQuery & EventFilters) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  const createdAt = { column: events.createdAt, kind: 'instant' as const, read: (e: EventRow) => e.createdAt };
  return fetchPage<EventRow>({
    query,
    idColumn: events.id,
    naturalOrder: [createdAt],
    updatedAt: createdAt,
    fetch: (keyset, orderBy, limit) =>
      db
        .select()
        .from(events)
        .where(
          and(
            eq(events.organisationId, auth.organisationId),
            eq(events.published, true),
            visibleVenueIds(auth, events.venueId),
            query.venueId ? eq(events.venueId, query.venueId) : undefined,
            query.type ? eq(events.type, query.type) : undefined,
            query.from ? gte(events.createdAt, query.from) : undefined,
            query.to ? lte(events.createdAt, query.to) : undefined,
            keyset,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
  });
}

export function eventJson(e: EventRow) {
  return { id: e.id, type: e.type, venueId: e.venueId, createdAt: e.createdAt.toISOString(), data: e.data };
}
