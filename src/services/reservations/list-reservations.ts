import { and, eq, gte, inArray, lt, lte, type SQL } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { reservations } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { ReservationStatus } from '../../lib/availability/types.js';
import { addDays } from '../../lib/local-time.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import type { ReservationParts, ReservationRow } from './reservation-json.js';
import { loadReservationParts } from './reservation-view.js';

export interface ReservationListQuery extends ListQuery {
  venueId?: string;
  /** serviceDates, both included. */
  from?: string;
  to?: string;
  status?: ReservationStatus[];
  guestId?: string;
  externalRef?: string;
}

/** The conditions of GET /reservations (the key's visibility included); exported for the plan test. */
export function reservationListFilters(auth: AuthContext, query: Omit<ReservationListQuery, 'cursorKey'>): (SQL | undefined)[] {
  return [
    eq(reservations.organisationId, auth.organisationId),
    visibleVenueIds(auth, reservations.venueId),
    query.venueId ? eq(reservations.venueId, query.venueId) : undefined,
    query.from ? gte(reservations.serviceDate, query.from) : undefined,
    query.to ? lte(reservations.serviceDate, query.to) : undefined,
    // The same window as instants, always true of the rows above: a service date's minutes run from
    // its local midnight to two days later (past-midnight service), in any zone from UTC-12 to
    // UTC+14, so a day either side covers them. It lets the page be read from the (…, startsAt, id)
    // indexes at the window; by serviceDate alone an organisation's page read every earlier
    // reservation first (14.6 s on two years of history). The service dates taken (serviceDateRange)
    // keep both bounds inside the instants PostgreSQL and the API can hold.
    query.from ? gte(reservations.startsAt, new Date(`${addDays(query.from, -1)}T00:00:00Z`)) : undefined,
    query.to ? lt(reservations.startsAt, new Date(`${addDays(query.to, 3)}T00:00:00Z`)) : undefined,
    query.status?.length ? inArray(reservations.status, query.status) : undefined,
    query.guestId ? eq(reservations.guestId, query.guestId) : undefined,
    query.externalRef ? eq(reservations.externalRef, query.externalRef) : undefined,
  ];
}

/** GET /reservations: by startsAt (or by updatedAt with changedAfter), within the key's venues. */
export async function listReservations(
  auth: AuthContext,
  query: ReservationListQuery,
): Promise<{ parts: ReservationParts[]; nextCursor: string | null }> {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  const filters = reservationListFilters(auth, query);
  const page = await fetchPage<ReservationRow>({
    query,
    idColumn: reservations.id,
    naturalOrder: [{ column: reservations.startsAt, kind: 'instant', read: (r) => r.startsAt }],
    updatedAt: { column: reservations.updatedAt, kind: 'instant', read: (r) => r.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(reservations)
        .where(and(...filters, keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
  return { parts: await loadReservationParts(db(), page.rows), nextCursor: page.nextCursor };
}

/** GET /reservations/:id: 404 for other organisations and venues outside a limited key. */
export async function getVisibleReservation(auth: AuthContext, id: string): Promise<ReservationParts> {
  const [row] = await db()
    .select()
    .from(reservations)
    .where(and(eq(reservations.id, id), eq(reservations.organisationId, auth.organisationId), visibleVenueIds(auth, reservations.venueId)));
  if (!row) throw ApiError.notFound('Reservation');
  return (await loadReservationParts(db(), [row]))[0];
}
