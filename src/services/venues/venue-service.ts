import { and, eq, inArray, sql, type SQL } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { prepareSelectAll } from '../../db/prepared-select.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { venues } from '../../db/schema/index.js';
import { canSeeVenue, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import type { VenueRow } from './venue-json.js';

export interface VenueInput {
  name: string;
  timezone: string;
  countryCode: string;
  slotIntervalMinutes?: number;
  bookingHorizonDays?: number;
  minNoticeMinutes?: number;
  lateToleranceMinutes?: number;
  noShowToleranceMinutes?: number | null;
  tableOptimisation?: 'off' | 'on';
  turnTimeSource?: 'configured' | 'learned';
}

const venueInOrganisation = and(eq(venues.id, sql.placeholder('venueId')), eq(venues.organisationId, sql.placeholder('organisationId')))!;
// Read on nearly every request: prepared once instead of rebuilt by the query builder each time.
const selectVenueInOrganisation = prepareSelectAll(venues, venueInOrganisation);

/** The venue if it exists in the key's organisation and the key may see it; 404 otherwise. */
export async function getVisibleVenue(auth: AuthContext, venueId: string, conn: DbOrTx = db()): Promise<VenueRow> {
  if (!canSeeVenue(auth, venueId)) throw ApiError.notFound('Venue');
  const params = { venueId, organisationId: auth.organisationId };
  const [venue] =
    conn === db() ? await selectVenueInOrganisation(params) : await conn.select().from(venues).where(venueInOrganisation).execute(params);
  if (!venue) throw ApiError.notFound('Venue');
  return venue;
}

/** The SQL condition restricting a venue-scoped table to what the key may see. */
export function visibleVenueIds(auth: AuthContext, venueIdColumn: Parameters<typeof eq>[0]): SQL | undefined {
  return auth.venueIds === null ? undefined : inArray(venueIdColumn, [...auth.venueIds]);
}

export async function listVenues(auth: AuthContext, query: ListQuery) {
  return fetchPage<VenueRow>({
    query,
    idColumn: venues.id,
    naturalOrder: [{ column: venues.createdAt, kind: 'instant', read: (v) => v.createdAt }],
    updatedAt: { column: venues.updatedAt, kind: 'instant', read: (v) => v.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(venues)
        .where(and(eq(venues.organisationId, auth.organisationId), visibleVenueIds(auth, venues.id), keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}

export async function createVenue(organisationId: string, input: VenueInput): Promise<VenueRow> {
  const [venue] = await db()
    .insert(venues)
    .values({ organisationId, ...input })
    .returning();
  return venue;
}

export async function updateVenue(auth: AuthContext, venueId: string, patch: Partial<VenueInput>): Promise<VenueRow> {
  await getVisibleVenue(auth, venueId);
  const [venue] = await db()
    .update(venues)
    .set({ ...patch, updatedAt: nextUpdatedAt(venues.updatedAt) })
    .where(and(eq(venues.id, venueId), eq(venues.organisationId, auth.organisationId)))
    .returning();
  if (!venue) throw ApiError.notFound('Venue');
  return venue;
}
