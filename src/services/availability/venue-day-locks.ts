import { sql } from 'drizzle-orm';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { renderOnce, runSql, type DbOrTx } from '../../db/client.js';
import type { VenueConfig } from '../../lib/availability/types.js';

// The locks a write of a venue day takes, in this order in every transaction: the venue row, the
// day's pacing lock, the day's table-moves lock. The loads that must see the day as it is once they
// are held (venue-day-loader.ts) are sent together with them.

/** Who asks: a key sees its organisation's venues, or some of them. */
export type Access = Pick<AuthContext, 'organisationId' | 'venueIds'>;

/** 404 when `access` may not see the venue. */
export function checkAccess(access: Access, venueId: string): void {
  if (access.venueIds !== null && !access.venueIds.includes(venueId)) throw ApiError.notFound('Venue');
}

/**
 * lockVenue's statement, rendered once (renderOnce). The subquery locks the row before
 * the outer projection takes the pacing lock. It also makes the rest of the transaction plan its
 * prepared statements once (`plan_cache_mode`, local to the transaction): on a long history
 * PostgreSQL's estimates for a future day are small enough that it planned the venue day's read anew
 * at every booking rather than use its generic plan, which reads the same index as fast (0.4 ms of
 * planning a booking at two years: docs/benchmarks.md "The venue day planned at every booking").
 * The statements after it, pipelined with it, are bound once it has run.
 */
const lockVenueStatement = renderOnce(sql`
    select case when x.pacing and ${sql.placeholder('pacingDay')}::text is not null
        then pg_advisory_xact_lock(hashtext('pacing'), hashtext(x.id::text || ${sql.placeholder('pacingDay')}::text)) is not null end as pacing_locked,
      set_config('plan_cache_mode', 'force_generic_plan', true) as plan_cache_mode
    from (
      select v.id, exists (select 1 from pacing_rules p where p.venue_id = v.id and p.is_enabled) as pacing
      from venues v where v.id = ${sql.placeholder('venueId')} and v.organisation_id = ${sql.placeholder('organisationId')}
      for share of v
    ) x`);

/**
 * FOR SHARE on the venue row, so that a floor or configuration change (which takes FOR NO KEY
 * UPDATE on it) waits for the writes that read the configuration, and the other way round; with
 * `pacingDay`, then the pacing lock of that day when the venue has pacing rules (see
 * lockPacingDay). Its own statement: the statements after it read with a snapshot taken once the
 * locks are held (in READ COMMITTED a statement that waits for a lock still reads from the
 * snapshot it started with). The venue lock comes first, the pacing lock second, in every
 * transaction. 404 when the key may not see the venue.
 */
export async function lockVenue(
  conn: DbOrTx,
  access: Access,
  venueId: string,
  pacingDay: string | null,
): Promise<{ pacingLocked: boolean }> {
  checkAccess(access, venueId);
  const [row] = await runSql<{ pacing_locked: boolean | null }>(conn, lockVenueStatement, {
    values: { pacingDay, venueId, organisationId: access.organisationId },
  });
  if (!row) throw ApiError.notFound('Venue');
  return { pacingLocked: row.pacing_locked === true };
}

/** Whether any enabled pacing rule exists: only then do writes need the per-day pacing lock. */
export function hasPacing(config: VenueConfig): boolean {
  return config.pacingRules.some((r) => r.isEnabled);
}

/**
 * Serialises every write that may change the covers of one venue's serviceDate, so that no pacing
 * block ever exceeds its maxCovers whatever the concurrency (docs/reservations.md). Held until the
 * transaction ends. The first key namespaces the lock; hash collisions only serialise more.
 */
export async function lockPacingDay(conn: DbOrTx, venueId: string, serviceDate: string): Promise<void> {
  await runSql(conn, sql`select pg_advisory_xact_lock(hashtext('pacing'), hashtext(${venueId} || ${serviceDate})) as locked`);
}

/**
 * Serialises the bookings of one venue's serviceDate that move other parties (docs/reservations.md
 * "Table optimisation"): each plans its moves after the moves committed before it, instead of
 * planning against the same snapshot and finding its plan stale. Bookings without moves never take
 * it. Held until the transaction ends; taken after the venue and pacing locks (their order in every
 * transaction). With pacing rules the pacing lock already serialises the day's bookings.
 */
export async function lockTableMovesDay(conn: DbOrTx, venueId: string, serviceDate: string): Promise<void> {
  await runSql(conn, sql`select pg_advisory_xact_lock(hashtext('table-moves'), hashtext(${venueId} || ${serviceDate})) as locked`);
}
