/**
 * Wait quotes (docs/reservations.md "Turn times and wait quotes"), pure: when a waiting party will sit,
 * from the floor as it is now. The host's way of seating is played forward with expected durations:
 * the seated parties leave at their expected ends, the reservations due take their tables at their
 * start for their turn time, and the waiting parties, in queue order, each take the seating that
 * fits them and is free soonest for their own turn time. No I/O.
 */

const MINUTE_MS = 60_000;

/** The narrowest range a quote gives, in minutes; a longer wait gets a third of itself. */
export const MIN_RANGE_MINUTES = 20;
/** The share of the range before the estimate: parties tend to sit later than expected more than earlier. */
const RANGE_SHARE_BEFORE = 0.4;
/** A party past its expected end is expected to leave within this many minutes. */
export const OVERSTAY_GRACE_MINUTES = 5;

export interface QuoteSeating {
  tableIds: readonly string[];
  minSeats: number;
  maxSeats: number;
  isBlocked: boolean;
}

export interface SeatedParty {
  tableIds: readonly string[];
  partySize: number;
  seatedAt: number;
}

export interface DueReservation {
  tableIds: readonly string[];
  partySize: number;
  startsAt: number;
}

export interface FloorNow {
  now: number;
  /** The first instant a party may be seated (the shift's start when it has not begun). */
  opensAt: number;
  /** The last instant a party may be seated (the shift's lastSeating). */
  lastSeatingAt: number;
  /** Tables and combinations, in the engine's choice order (the first that fits and is free wins). */
  seatings: readonly QuoteSeating[];
  seated: readonly SeatedParty[];
  due: readonly DueReservation[];
  /** Expected minutes at the table for a party of that size; undefined: none known (never seated by the estimate). */
  turnMinutes: (partySize: number) => number | undefined;
}

export type SeatEstimate =
  | { estimatedSeatTime: { from: number; to: number }; estimatedWaitMinutes: number; seatAt: number }
  | { estimatedSeatTime: null; estimatedWaitMinutes: null; reason: 'after_last_seating' };

/** The range around an expected seat time: MIN_RANGE_MINUTES or a third of the wait wide, whichever is larger, never before now. */
export function seatRange(now: number, seatAt: number): { from: number; to: number } {
  const width = Math.max(MIN_RANGE_MINUTES * MINUTE_MS, (seatAt - now) / 3);
  const from = Math.max(now, seatAt - width * RANGE_SHARE_BEFORE);
  return { from, to: from + width };
}

/** When a seated party is expected to leave: its seating plus its turn time, or shortly when it is already past that. */
export function expectedEnd(seatedAt: number, turnMinutes: number, now: number): number {
  return Math.max(seatedAt + turnMinutes * MINUTE_MS, now + OVERSTAY_GRACE_MINUTES * MINUTE_MS);
}

/** The busy spans of each table as the estimate plays the evening forward. */
class Timeline {
  private readonly busy = new Map<string, Array<[number, number]>>();

  take(tableIds: readonly string[], from: number, until: number): void {
    for (const id of tableIds) {
      const spans = this.busy.get(id);
      if (spans) spans.push([from, until]);
      else this.busy.set(id, [[from, until]]);
    }
  }

  /** The earliest instant ≥ `after` from which every table is free for `length` ms: `after` or the end of a span. */
  earliestFree(tableIds: readonly string[], after: number, length: number): number {
    const spans = tableIds.flatMap((id) => this.busy.get(id) ?? []);
    const candidates = [after, ...spans.map(([, end]) => end).filter((end) => end > after)].sort((a, b) => a - b);
    for (const t of candidates) {
      if (spans.every(([start, end]) => end <= t || start >= t + length)) return t;
    }
    return Infinity;
  }
}

/**
 * The estimates of a queue, in its order, from the floor now (`queue`: the party sizes waiting, first
 * first), and the estimate of each further party size as if it joined last (`asking`), each on its own.
 */
export function estimateSeatTimes(
  floor: FloorNow,
  queue: readonly number[],
  asking: readonly number[] = [],
): { queue: SeatEstimate[]; asking: SeatEstimate[] } {
  const timeline = new Timeline();
  for (const party of floor.seated) {
    const turn = floor.turnMinutes(party.partySize);
    // A party with no known turn time keeps its table for the evening: nothing says when it leaves.
    timeline.take(party.tableIds, party.seatedAt, turn === undefined ? Infinity : expectedEnd(party.seatedAt, turn, floor.now));
  }
  for (const r of floor.due) {
    const turn = floor.turnMinutes(r.partySize);
    if (turn !== undefined) timeline.take(r.tableIds, r.startsAt, r.startsAt + turn * MINUTE_MS);
  }
  const start = Math.max(floor.now, floor.opensAt);
  const seat = (partySize: number, commit: boolean): SeatEstimate => {
    const turn = floor.turnMinutes(partySize);
    let best: { at: number; seating: QuoteSeating } | undefined;
    if (turn !== undefined) {
      for (const s of floor.seatings) {
        if (s.isBlocked || partySize < s.minSeats || partySize > s.maxSeats) continue;
        const at = timeline.earliestFree(s.tableIds, start, turn * MINUTE_MS);
        if (!best || at < best.at) best = { at, seating: s };
      }
    }
    if (!best || best.at > floor.lastSeatingAt) return { estimatedSeatTime: null, estimatedWaitMinutes: null, reason: 'after_last_seating' };
    if (commit) timeline.take(best.seating.tableIds, best.at, best.at + turn! * MINUTE_MS);
    return {
      estimatedSeatTime: seatRange(floor.now, best.at),
      estimatedWaitMinutes: Math.round((best.at - floor.now) / MINUTE_MS),
      seatAt: best.at,
    };
  };
  const queued = queue.map((size) => seat(size, true));
  return { queue: queued, asking: asking.map((size) => seat(size, false)) };
}
