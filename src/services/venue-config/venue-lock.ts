import { and, eq } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { venues } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { VenueRow } from '../venues/venue-json.js';

/** Who may change a venue: an API key, or the command line acting for an organisation. */
export type VenueAccess = Pick<AuthContext, 'organisationId' | 'venueIds' | 'signal'>;

/**
 * Locks the venue row for the rest of the transaction, or 404 if the access may not see it.
 * Configuration writes of one venue (shift overlap checks, plan activation) are serialised by
 * this lock. FOR NO KEY UPDATE leaves the FOR KEY SHARE taken by inserts that reference the
 * venue (reservations, guests) free to proceed.
 */
export async function lockVisibleVenue(tx: Tx, access: VenueAccess, venueId: string): Promise<VenueRow> {
  if (access.venueIds !== null && !access.venueIds.includes(venueId)) throw ApiError.notFound('Venue');
  const [venue] = await tx
    .select()
    .from(venues)
    .where(and(eq(venues.id, venueId), eq(venues.organisationId, access.organisationId)))
    .for('no key update');
  if (!venue) throw ApiError.notFound('Venue');
  return venue;
}
