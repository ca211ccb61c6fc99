import type { FloorTable } from './types.js';

/**
 * A venue's demand curve is learned from its own reservations of the last four weeks: long enough to
 * average out one odd night, short enough to follow a change of season or of menu.
 */
export const DEMAND_HISTORY_DAYS = 28;

/** Reservations of the history at one party size and local time (HH:mm), as the loader counts them. */
export interface DemandHistoryRow {
  partySize: number;
  time: string;
  count: number;
}

/**
 * The parties a night usually brings, by party size and local time: the reservations of the history
 * per day that had any. What the table choice reads to keep the tables that the rest of the night
 * will ask for.
 */
export interface DemandCurve {
  /** Parties per night, by party size, then by HH:mm. */
  readonly partiesBySize: ReadonlyMap<number, ReadonlyMap<string, number>>;
}

/** A venue without history: no party size is expected more than another, and the choice falls to the plan order. */
export const defaultDemandCurve: DemandCurve = { partiesBySize: new Map() };

/** The curve of `nights` days of history (the days that had reservations); the default curve when there are none. */
export function learnDemandCurve(rows: readonly DemandHistoryRow[], nights: number): DemandCurve {
  if (nights <= 0 || rows.length === 0) return defaultDemandCurve;
  const partiesBySize = new Map<number, Map<string, number>>();
  for (const { partySize, time, count } of rows) {
    let byTime = partiesBySize.get(partySize);
    if (!byTime) partiesBySize.set(partySize, (byTime = new Map()));
    byTime.set(time, (byTime.get(time) ?? 0) + count / nights);
  }
  return { partiesBySize };
}

/** Parties of one size expected at one time. */
export interface ExpectedParties {
  partySize: number;
  time: string;
  parties: number;
}

/**
 * The parties still to come on a day: the curve less the reservations already booked at that size and
 * time, never below zero, in a fixed order (party size, then time) whatever the order of the input.
 */
export function remainingDemand(curve: DemandCurve, booked: readonly { partySize: number; time: string }[]): ExpectedParties[] {
  const bookedCount = new Map<string, number>();
  for (const b of booked) bookedCount.set(`${b.partySize} ${b.time}`, (bookedCount.get(`${b.partySize} ${b.time}`) ?? 0) + 1);
  const remaining: ExpectedParties[] = [];
  for (const [partySize, byTime] of curve.partiesBySize) {
    for (const [time, expected] of byTime) {
      const parties = expected - (bookedCount.get(`${partySize} ${time}`) ?? 0);
      if (parties > 0) remaining.push({ partySize, time, parties });
    }
  }
  return remaining.sort((a, b) => a.partySize - b.partySize || (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
}

/** Expected parties placed on the day: their instants, given by the engine (turn time rules, the day's clock). */
export interface ExpectedSpan {
  partySize: number;
  startsAt: number;
  endsAt: number;
  parties: number;
}

/**
 * How much of the rest of the night a seating would take from the parties still expected: for each of
 * its tables, the expected parties over its times that could sit there, each spread over every table of
 * the floor that could seat it (a party that fits one table in ten weighs a tenth on each). The lower,
 * the less the night misses the tables. Pure and bounded: (tables of the seating) × (expected spans).
 */
export class DemandForecast {
  private readonly tableById: ReadonlyMap<string, FloorTable>;
  /** Per party size, the unblocked tables that seat it. */
  private readonly tablesFitting = new Map<number, number>();

  constructor(
    private readonly spans: readonly ExpectedSpan[],
    tables: readonly FloorTable[],
  ) {
    this.tableById = new Map(tables.map((t) => [t.id, t]));
    for (const { partySize } of spans) {
      if (this.tablesFitting.has(partySize)) continue;
      this.tablesFitting.set(partySize, tables.filter((t) => !t.isBlocked && t.minSeats <= partySize && partySize <= t.maxSeats).length);
    }
  }

  get isEmpty(): boolean {
    return this.spans.length === 0;
  }

  /** The expected parties over [start, end) that would miss these tables (see the class). */
  demandOn(tableIds: readonly string[], start: number, end: number): number {
    let demand = 0;
    for (const tableId of tableIds) {
      const table = this.tableById.get(tableId);
      if (!table) continue;
      for (const span of this.spans) {
        if (span.partySize < table.minSeats || span.partySize > table.maxSeats) continue;
        if (span.startsAt < end && start < span.endsAt) demand += span.parties / this.tablesFitting.get(span.partySize)!;
      }
    }
    return demand;
  }
}
