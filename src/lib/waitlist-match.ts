import type { Occupancy } from './availability/occupancy.js';
import { fitsParty, type Seating } from './availability/seatings.js';

export interface QueuedParty {
  id: string;
  partySize: number;
}

export interface FreedTableMatch<E extends QueuedParty> {
  entry: E;
  seating: Seating;
}

const MINUTE_MS = 60_000;

/**
 * compatible_table_freed (docs/operations.md "Waiting list"): the first entry of the queue, in its order, that a seating
 * using a freed table can take from `start` for the party's turn time. Only unblocked seatings that
 * include one of the freed tables count (a combination the freed table completes counts too); an
 * entry whose party has no turn-time rule is passed over. Seatings are tried in the engine's choice
 * order, so the match names the table the engine itself would pick among them.
 */
export function findCompatibleEntry<E extends QueuedParty>(input: {
  queue: readonly E[];
  seatings: readonly Seating[];
  freedTableIds: readonly string[];
  occupancy: Occupancy;
  start: number;
  turnTimeMinutes: (partySize: number) => number | undefined;
}): FreedTableMatch<E> | null {
  const freed = new Set(input.freedTableIds);
  const candidates = input.seatings.filter((s) => !s.isBlocked && s.tableIds.some((id) => freed.has(id)));
  if (!candidates.length) return null;
  for (const entry of input.queue) {
    const minutes = input.turnTimeMinutes(entry.partySize);
    if (minutes === undefined) continue;
    const end = input.start + minutes * MINUTE_MS;
    const seating = candidates.find((s) => fitsParty(s, entry.partySize) && input.occupancy.isFree(s.tableIds, input.start, end));
    if (seating) return { entry, seating };
  }
  return null;
}
