import { eq, inArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { organisations, reservations, reservationTables, venues } from '../../db/schema/index.js';
import { mapInChunks } from '../../lib/chunks.js';
import type { Emit } from '../outbox/outbox.js';
import { emitReservationEvents } from './reservation-events.js';
import { loadReservationParts } from './reservation-view.js';

/**
 * docs/venue-configuration.md: after a floor change (a table blocked, a plan replaced or activated), every
 * reservation still to come whose table is now blocked, deleted or outside the active plan (or
 * whose combination was deleted) keeps its time, loses its table and needs attention, emitting
 * reservation_needs_attention. Parties already seated keep their table. Runs in the floor
 * change's transaction, which holds the venue lock, so no booking slips in between.
 */
export async function releaseInvalidTableAssignments(tx: Tx, emit: Emit, venueId: string): Promise<number> {
  const stale = (await tx.execute(sql`
    select r.id from reservations r
    where r.venue_id = ${venueId}
      and r.table_assigned
      and r.status in ('created', 'confirmed', 'arrived')
      and r.ends_at > clock_timestamp()
      and (
        exists (
          select 1 from reservation_tables rt
          join floor_tables t on t.id = rt.table_id
          join floor_plans p on p.id = t.floor_plan_id
          where rt.reservation_id = r.id and (t.is_blocked or t.deleted_at is not null or not p.is_active)
        )
        or exists (
          select 1 from table_combinations c
          join floor_plans p on p.id = c.floor_plan_id
          where c.id = r.table_combination_id and (c.deleted_at is not null or not p.is_active)
        )
      )
    order by r.id
    for update of r
  `)) as unknown as { id: string }[];
  if (!stale.length) return 0;
  const [org] = await tx
    .select({ isTest: organisations.isTest })
    .from(venues)
    .innerJoin(organisations, eq(organisations.id, venues.organisationId))
    .where(eq(venues.id, venueId));
  // A plan switch can unseat thousands of reservations: bounded statements, in this transaction.
  const released = await mapInChunks(stale, async (chunk) => {
    const ids = chunk.map((r) => r.id);
    await tx.delete(reservationTables).where(inArray(reservationTables.reservationId, ids));
    const rows = await tx
      .update(reservations)
      .set({
        tableId: null,
        tableCombinationId: null,
        tableAssigned: false,
        needsAttention: true,
        updatedAt: nextUpdatedAt(reservations.updatedAt),
      })
      .where(inArray(reservations.id, ids))
      .returning();
    for (const parts of await loadReservationParts(tx, rows))
      emitReservationEvents(emit, parts, ['reservation_needs_attention'], !org.isTest);
    return rows;
  });
  return released.length;
}
