/** Reservation statuses as far as guest counters care (docs/reservations.md). */
export type CountedStatus = 'created' | 'confirmed' | 'arrived' | 'seated' | 'released' | 'completed' | 'no_show' | 'cancelled';

export interface GuestCounterDeltas {
  visitCount: number;
  noShowCount: number;
  cancelledCount: number;
  /** The reservation became completed: lastVisitAt moves to its instant. */
  visited: boolean;
}

const none: GuestCounterDeltas = { visitCount: 0, noShowCount: 0, cancelledCount: 0, visited: false };

/**
 * How a reservation's status move changes its guest's counters (docs/reservations.md): completed counts
 * a visit, no_show a no-show, cancelled a cancellation, and a no_show that turns out to be a late
 * arrival (arrived or seated) takes its no-show back. `from` is null for a reservation created
 * directly in its status (imports of past reservations).
 */
export function guestCounterDeltas(from: CountedStatus | null, to: CountedStatus): GuestCounterDeltas {
  if (from === to) return none;
  const deltas = { ...none };
  if (to === 'completed') {
    deltas.visitCount = 1;
    deltas.visited = true;
  }
  if (to === 'no_show') deltas.noShowCount = 1;
  if (to === 'cancelled') deltas.cancelledCount = 1;
  if (from === 'no_show' && (to === 'arrived' || to === 'seated')) deltas.noShowCount = -1;
  return deltas;
}
