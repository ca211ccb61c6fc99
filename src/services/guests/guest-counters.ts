import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests } from '../../db/schema/index.js';
import { guestCounterDeltas, type CountedStatus } from '../../lib/guest-counter-deltas.js';

/**
 * Applies a reservation's status move to its guest's counters, in the caller's transaction.
 * Counters are statistics, not profile: no guest_profile_changed is emitted, but updatedAt moves
 * so that a sync client (changedAfter) sees the new figures. lastVisitAt only moves forward, so an
 * old reservation completed late (or imported) never hides a newer visit.
 */
export async function applyGuestStatusChange(
  tx: DbOrTx,
  guestId: string,
  fromStatus: CountedStatus | null,
  toStatus: CountedStatus,
  at: Date,
): Promise<void> {
  const d = guestCounterDeltas(fromStatus, toStatus);
  if (!d.visitCount && !d.noShowCount && !d.cancelledCount) return;
  await tx
    .update(guests)
    .set({
      visitCount: sql`${guests.visitCount} + ${d.visitCount}`,
      noShowCount: sql`greatest(0, ${guests.noShowCount} + ${d.noShowCount})`,
      cancelledCount: sql`${guests.cancelledCount} + ${d.cancelledCount}`,
      ...(d.visited ? { lastVisitAt: sql`greatest(${guests.lastVisitAt}, ${at.toISOString()}::timestamptz)` } : {}),
      updatedAt: nextUpdatedAt(guests.updatedAt),
    })
    .where(eq(guests.id, guestId));
}
