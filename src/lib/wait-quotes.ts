/**
 * Wait quotes (docs/reservations.md "Turn times and wait quotes"), pure: when a waiting party will sit,
 * from the floor as it is now. The host's way of seating is played forward: the seated parties leave at
 * their ends, the reservations due take their tables at their start for their turn time, and the
 * waiting parties, in queue order, each take the seating that fits them and is free soonest.
 *
 * With configured turn times every party stays exactly its turn time: one play, known ends. With
 * learned ones the spread between p50 and p80 says how much parties differ, and the evening is played
 * SAMPLED_PLAYS times with durations drawn from it (log-normal; a seated party's drawn longer than it
 * has already stayed): the first of many tables to free comes earlier than the first of their p50
 * ends, which one play of p50s cannot show. The quote is the median of the plays' seat times, its range
 * the window of the allowed width that holds most of them. No I/O, no randomness: the draws follow a
 * fixed low-discrepancy sequence, so the same floor gets the same answer.
 */

const MINUTE_MS = 60_000;

/** The narrowest range a quote gives, in minutes; a longer wait gets a third of itself. */
export const MIN_RANGE_MINUTES = 20;
/** The share of a single play's range before its estimate (sampled plays place the range where most of them fall). */
const RANGE_SHARE_BEFORE = 0.4;
/** A party past its expected end is expected to leave within this many minutes. */
export const OVERSTAY_GRACE_MINUTES = 5;
/** Plays of the evening when durations spread. */
const SAMPLED_PLAYS = 32;
/** z of the 80th percentile of the standard normal: σ = ln(p80 / p50) / Z80. */
const Z80 = 0.8416;

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
  /**
   * Minutes at the table for a party of that size: p50, and p80 when durations are known to spread
   * (learned); undefined: none known (never seated by the estimate).
   */
  turnMinutes: (partySize: number) => TurnMinutes | undefined;
}

export interface TurnMinutes {
  p50: number;
  p80?: number;
}

export type SeatEstimate =
  | { estimatedSeatTime: { from: number; to: number }; estimatedWaitMinutes: number; seatAt: number }
  | { estimatedSeatTime: null; estimatedWaitMinutes: null; reason: 'after_last_seating' };

/** The width of a range: MIN_RANGE_MINUTES or a third of the wait, whichever is larger. */
function rangeWidth(now: number, seatAt: number): number {
  return Math.max(MIN_RANGE_MINUTES * MINUTE_MS, (seatAt - now) / 3);
}

/** The range around one expected seat time, never before now. */
export function seatRange(now: number, seatAt: number): { from: number; to: number } {
  const width = rangeWidth(now, seatAt);
  const from = Math.max(now, seatAt - width * RANGE_SHARE_BEFORE);
  return { from, to: from + width };
}

/**
 * The range of sampled seat times (ascending; Infinity: not seated): the window of the allowed width
 * around their median that holds the most of them, the earliest of equals.
 */
export function sampledRange(now: number, sorted: readonly number[], median: number): { from: number; to: number } {
  const width = rangeWidth(now, median);
  let best = seatRange(now, median);
  let bestCount = sorted.filter((t) => t >= best.from && t <= best.to).length;
  for (let i = 0, j = 0; i < sorted.length && Number.isFinite(sorted[i]); i++) {
    while (j < sorted.length && sorted[j] <= sorted[i] + width) j++;
    if (j - i > bestCount && sorted[i] <= median && median <= sorted[i] + width) {
      best = { from: Math.max(now, sorted[i]), to: Math.max(now, sorted[i]) + width };
      bestCount = j - i;
    }
  }
  return best;
}

/** The k-th number of a Weyl sequence of the golden ratio in (0, 1): evenly spread draws without a random source. */
function spreadUniform(k: number): number {
  const u = (k * 0.6180339887498949) % 1;
  return Math.min(1 - 1e-9, Math.max(1e-9, u));
}

/** A standard normal draw from two such numbers (Box–Muller). */
function normalDraw(k: number): number {
  return Math.sqrt(-2 * Math.log(spreadUniform(2 * k + 1))) * Math.cos(2 * Math.PI * spreadUniform(2 * k + 2));
}

/** The log-normal σ of a turn time; 0 when it does not spread. */
function spreadOf(turn: TurnMinutes): number {
  return turn.p80 !== undefined && turn.p80 > turn.p50 ? Math.log(turn.p80 / turn.p50) / Z80 : 0;
}

/** When a seated party is expected to leave: its seating plus its turn time, or shortly when it is already past that. */
export function expectedEnd(seatedAt: number, turnMinutes: number, now: number): number {
  return Math.max(seatedAt + turnMinutes * MINUTE_MS, now + OVERSTAY_GRACE_MINUTES * MINUTE_MS);
}

/** The busy spans of each table as the estimate plays the evening forward, by start. */
class Timeline {
  private readonly busy = new Map<string, Array<[number, number]>>();

  take(tableIds: readonly string[], from: number, until: number): void {
    for (const id of tableIds) {
      let spans = this.busy.get(id);
      if (!spans) this.busy.set(id, (spans = []));
      let i = spans.length;
      while (i > 0 && spans[i - 1][0] > from) i--;
      spans.splice(i, 0, [from, until]);
    }
  }

  /**
   * The earliest instant ≥ `after` from which every table is free for `length` ms (Infinity: never);
   * any instant from `notAfter` on is as good as none (the caller has one already).
   */
  earliestFree(tableIds: readonly string[], after: number, length: number, notAfter: number): number {
    // One table (nearly always): its own spans, already by start. A combination: all of its tables' spans.
    const spans =
      tableIds.length === 1
        ? (this.busy.get(tableIds[0]) ?? [])
        : tableIds.flatMap((id) => this.busy.get(id) ?? []).sort((a, b) => a[0] - b[0]);
    let t = after;
    for (const [start, end] of spans) {
      if (end <= t) continue;
      if (start >= t + length || t >= notAfter) return t;
      t = end;
    }
    return t;
  }
}

/** The minutes a party stays in one play, at least `atLeastMinutes` for one already seated that long. */
type Duration = (turn: TurnMinutes, atLeastMinutes: number) => number;

/**
 * One play of the evening: the seat time of each queued party in order, then of each asked size on
 * its own (Infinity: not before the last seating, or nothing fits).
 */
function play(
  floor: FloorNow,
  queue: readonly number[],
  asking: readonly number[],
  duration: Duration,
): { queue: number[]; asking: number[] } {
  const timeline = new Timeline();
  for (const party of floor.seated) {
    const turn = floor.turnMinutes(party.partySize);
    const stayed = (floor.now - party.seatedAt) / MINUTE_MS;
    // A party with no known turn time keeps its table for the evening: nothing says when it leaves.
    timeline.take(
      party.tableIds,
      party.seatedAt,
      turn === undefined ? Infinity : expectedEnd(party.seatedAt, duration(turn, stayed), floor.now),
    );
  }
  for (const r of floor.due) {
    const turn = floor.turnMinutes(r.partySize);
    if (turn !== undefined) timeline.take(r.tableIds, r.startsAt, r.startsAt + duration(turn, 0) * MINUTE_MS);
  }
  const start = Math.max(floor.now, floor.opensAt);
  const seat = (partySize: number, commit: boolean): number => {
    const turn = floor.turnMinutes(partySize);
    if (turn === undefined) return Infinity;
    const length = duration(turn, 0) * MINUTE_MS;
    let best: { at: number; seating: QuoteSeating } | undefined;
    for (const s of floor.seatings) {
      if (s.isBlocked || partySize < s.minSeats || partySize > s.maxSeats) continue;
      const at = timeline.earliestFree(s.tableIds, start, length, best?.at ?? Infinity);
      if (!best || at < best.at) best = { at, seating: s };
      // Free now: no seating can do better.
      if (at === start) break;
    }
    if (!best || best.at > floor.lastSeatingAt) return Infinity;
    if (commit) timeline.take(best.seating.tableIds, best.at, best.at + length);
    return best.at;
  };
  const queued = queue.map((size) => seat(size, true));
  return { queue: queued, asking: asking.map((size) => seat(size, false)) };
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
  const sizes = [...floor.seated, ...floor.due].map((p) => p.partySize).concat(queue, asking);
  const spreads = sizes.some((size) => {
    const turn = floor.turnMinutes(size);
    return turn !== undefined && spreadOf(turn) > 0;
  });
  const plays: Array<{ queue: number[]; asking: number[] }> = [];
  if (!spreads) {
    plays.push(play(floor, queue, asking, (turn) => turn.p50));
  } else {
    let k = 0;
    for (let i = 0; i < SAMPLED_PLAYS; i++) {
      plays.push(
        play(floor, queue, asking, (turn, atLeast) => {
          const sigma = spreadOf(turn);
          // A party that stayed `atLeast` already: draws shorter than that are drawn again (a few times).
          for (let tries = 0; tries < 8; tries++) {
            const minutes = turn.p50 * Math.exp(sigma * normalDraw(k++));
            if (minutes > atLeast) return minutes;
          }
          return turn.p50;
        }),
      );
    }
  }
  const estimate = (times: number[]): SeatEstimate => {
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    if (!Number.isFinite(median)) return { estimatedSeatTime: null, estimatedWaitMinutes: null, reason: 'after_last_seating' };
    return {
      estimatedSeatTime: sorted.length > 1 ? sampledRange(floor.now, sorted, median) : seatRange(floor.now, median),
      estimatedWaitMinutes: Math.round((median - floor.now) / MINUTE_MS),
      seatAt: median,
    };
  };
  return {
    queue: queue.map((_, i) => estimate(plays.map((p) => p.queue[i]))),
    asking: asking.map((_, i) => estimate(plays.map((p) => p.asking[i]))),
  };
}
