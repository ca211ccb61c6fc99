import { daysBetween, instantToLocal, serviceDayClock } from '../local-time.js';
import {
  MINUTES_PER_DAY,
  formatMinutes,
  gridTimes,
  isoDayOfWeek,
  minutesOf,
  resolveServiceTime,
  shiftWindow,
  shiftsOn,
  type ShiftSchedule,
  type ShiftWindow,
} from '../shift-schedule.js';
import { Occupancy, isLapsedHold } from './occupancy.js';
import { blockOfBooking, blockStartOf, countsForPacing, coversByBlock } from './pacing.js';
import { fitsParty, orderedSeatings, type Seating } from './seatings.js';
import { DemandForecast, defaultDemandCurve, remainingDemand, type DemandCurve } from './demand-curve.js';
import { TableOptimiser, type TableMove } from './table-optimiser.js';
import { BoundedCache } from '../bounded-cache.js';
import { clampLearnedMinutes, indexLearnedCells, learnedMinutesOf, resolveLearnedCells, type LearnedCell } from '../learned-turn-times.js';
import type { Booking, PacingRule, Proposal, TurnTimeRule, TurnTimeSource, UnavailableReason, VenueConfig } from './types.js';

const MINUTE_MS = 60_000;
/** docs/reservations.md: alternatives are the nearest available grid times within ±120 minutes, at most 6. */
export const ALTERNATIVES_WINDOW_MINUTES = 120;
export const MAX_ALTERNATIVES = 6;

/**
 * Instants a reservation can be written with: PostgreSQL reads JavaScript's ISO strings for the
 * years 0001 to 9999 only, so a time near either end of the calendar of serviceDates that falls
 * outside them does not exist for the service.
 */
const FIRST_WRITABLE_INSTANT = Date.parse('0001-01-01T00:00:00.000Z');
const LAST_WRITABLE_INSTANT = Date.parse('9999-12-31T23:59:59.999Z');

export function isWritableSpan(startsAt: number, endsAt: number): boolean {
  return startsAt >= FIRST_WRITABLE_INSTANT && endsAt <= LAST_WRITABLE_INSTANT;
}

export interface EvaluateOptions {
  /** The reservation being changed: its own tables and covers do not count against it. */
  reservationId?: string;
  /** Skip the past / horizon / minimum-notice rules (walk-ins, parties already at the venue). */
  ignoreBookingWindow?: boolean;
  /** Only this table or combination is acceptable (an explicit request). */
  requestedSeatingId?: string;
  /** Tried first when it still fits and is free (a moved reservation keeps its table). */
  preferredSeatingId?: string;
  /** Return every free fitting seating in choice order (for retries after a lost race), not just the first. */
  allSeatings?: boolean;
  /** The reservation will have no table: skip the table stage (an explicit removal of the table). */
  withoutTable?: boolean;
  /** Never move other parties, whatever the venue's tableOptimisation (imports: they change nothing but their own rows). */
  keepOthersInPlace?: boolean;
  /**
   * Only whether the time is available matters (the grids of slots, counts and alternatives): a full
   * pacing block then answers before the table optimiser searches, and an unavailable answer's reason
   * may be pacing_full where a full evaluation would say no_table.
   */
  availableOnly?: boolean;
}

export interface Timing {
  shiftId: string;
  minuteOfService: number;
  startsAt: number;
  endsAt: number;
  turnTimeMinutes: number;
  /** Where turnTimeMinutes came from (the explained answer names it). */
  turnTimeSource: TurnTimeSource;
  overflowsShift: boolean;
}

export type Evaluation =
  /** `moves`: the parties to move first (docs/reservations.md "Table optimisation"); then `seatings` is the one seating they free. */
  | { available: true; timing: Timing; seatings: Seating[]; moves: TableMove[] }
  | { available: false; reason: UnavailableReason; timing?: Timing };

/** One grid time explained: the proposal's fields when it is available. */
export type ExplainedSlot =
  | ({ available: true; reason: 'available'; turnTimeSource: TurnTimeSource } & Proposal)
  | { time: string; available: false; reason: UnavailableReason };

export interface AvailabilityAnswer {
  available: boolean;
  reason: UnavailableReason | null;
  proposal: Proposal | null;
  alternatives: Proposal[];
}

interface PreparedConfig {
  seatings: Seating[];
  seatingById: Map<string, Seating>;
  pacingByShift: Map<string, PacingRule[]>;
  areaOf: (tableId: string) => string;
  /** The shortest turn time of the venue: an idle gap shorter than it seats nobody. */
  shortestTurnMs: number;
  /** The learned cells by shift, day and band, when the venue takes its turn times from them. */
  learnedCells: ReadonlyMap<string, LearnedCell> | null;
}

const prepared = new WeakMap<VenueConfig, PreparedConfig>();

/**
 * Table optimisers by the reservations they were built on (DayContext.reservationsKey) and
 * serviceDate: the requests of a busy night ask the same questions again and again, and the optimiser
 * keeps its index and its answers. One is reused only for the same configuration, and while `now`
 * changes nothing it depends on.
 */
const optimisers = new BoundedCache<{ config: VenueConfig; optimiser: TableOptimiser }>(1000);

/** What the days of one request share. */
export interface DayContext {
  /** The days of a range: one occupancy over all of them, and the reservations it was built from. */
  range?: { occupancy: Occupancy; bookings: readonly Booking[] };
  /**
   * Names the venue's reservations as loaded when they are committed ones (venue and reservation
   * version): the day's table optimiser is then kept for the next request that loads the same.
   */
  reservationsKey?: string;
  /**
   * How a new party's free table is chosen: by packing (the engine's rule), or the first in the plan's
   * order (the rule before it, kept for bench/table-optimisation.ts to compare the two).
   */
  tableChoice?: 'packing' | 'plan-order';
  /**
   * The venue's demand curve (docs/reservations.md "Which table"), loaded with the day: among equal
   * seatings, a booking takes the one the parties still expected tonight need least. Absent: the
   * default curve (no size expected more than another).
   */
  demand?: DemandCurve;
}

/** What depends on the configuration only, computed once per loaded configuration. */
function prepare(config: VenueConfig): PreparedConfig {
  let p = prepared.get(config);
  if (!p) {
    const seatings = orderedSeatings(config);
    const pacingByShift = new Map<string, PacingRule[]>();
    for (const rule of config.pacingRules) {
      if (!rule.isEnabled) continue;
      pacingByShift.set(rule.shiftId, [...(pacingByShift.get(rule.shiftId) ?? []), rule]);
    }
    const areaById = new Map(config.tables.map((t) => [t.id, t.areaId]));
    const learnedCells =
      config.venue.turnTimeSource === 'learned'
        ? indexLearnedCells(resolveLearnedCells(config.learnedTurnTimes ?? null, config.shifts, () => null))
        : null;
    const learnedMinutes = [...(learnedCells?.values() ?? [])].flatMap((c) =>
      c.borrowed === 'configured' || c.p50Minutes === null ? [] : [clampLearnedMinutes(c.p50Minutes)],
    );
    const shortestTurnMs = Math.min(...config.turnTimeRules.map((r) => r.durationMinutes), ...learnedMinutes) * MINUTE_MS;
    p = {
      seatings,
      seatingById: new Map(seatings.map((s) => [s.id, s])),
      pacingByShift,
      areaOf: (tableId) => areaById.get(tableId) ?? '',
      shortestTurnMs,
      learnedCells,
    };
    prepared.set(config, p);
  }
  return p;
}

/** A table or combination of the active plan by id (undefined when it is not one). */
export function seatingOf(config: VenueConfig, id: string): Seating | undefined {
  return prepare(config).seatingById.get(id);
}

/** docs/venue-configuration.md: the shift-specific rule covering the party wins over a venue-wide one; the narrowest range first. */
export function chooseTurnTimeRule(rules: readonly TurnTimeRule[], shiftId: string, partySize: number): TurnTimeRule | undefined {
  let best: TurnTimeRule | undefined;
  let bestScore: [number, number, string] | undefined;
  for (const rule of rules) {
    if (partySize < rule.minPartySize || partySize > rule.maxPartySize) continue;
    if (rule.shiftId !== null && rule.shiftId !== shiftId) continue;
    const score: [number, number, string] = [rule.shiftId === null ? 1 : 0, rule.maxPartySize - rule.minPartySize, rule.id];
    if (
      !bestScore ||
      score[0] < bestScore[0] ||
      (score[0] === bestScore[0] && (score[1] < bestScore[1] || (score[1] === bestScore[1] && score[2] < bestScore[2])))
    ) {
      best = rule;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The one place a party's turn time is decided (docs/reservations.md "Turn times and wait quotes"):
 * with the venue's turnTimeSource `learned`, the learned p50 of its cell (party-size band, shift, day
 * of week of the serviceDate; kept within 30..300 minutes, with its p80) unless that cell falls back to the rules;
 * otherwise the configured rule. Availability, bookings, imports, the waiting list and the table
 * optimiser all ask here. Undefined: no rule and nothing learned.
 */
export function resolveTurnTime(
  config: VenueConfig,
  shiftId: string,
  serviceDate: string,
  partySize: number,
): { minutes: number; source: TurnTimeSource; p80Minutes?: number } | undefined {
  const cells = prepare(config).learnedCells;
  const learned = cells && shiftId ? learnedMinutesOf(cells, shiftId, isoDayOfWeek(serviceDate), partySize) : null;
  if (learned !== null) return { minutes: learned.p50, source: 'learned', p80Minutes: learned.p80 };
  const rule = chooseTurnTimeRule(config.turnTimeRules, shiftId, partySize);
  return rule && { minutes: rule.durationMinutes, source: 'configured' };
}

/**
 * The engine over one serviceDate of a venue: its configuration, the reservations around that day
 * and the current instant. Pure: everything it needs is passed in.
 */
export class VenueDay {
  private readonly prepared: PreparedConfig;
  private readonly dayBookings: readonly Booking[];
  private readonly occupancy: Occupancy;
  private readonly clock: (minuteOfService: number) => number;
  private readonly dateBookable: boolean;
  private readonly dayShifts: readonly ShiftSchedule[];
  /** Covers per pacing block of each rule, computed on first use. */
  private readonly blockCovers = new Map<PacingRule, Map<number, number>>();
  /** Every reservation holding tables around the day: what the table optimiser may have to move. */
  private readonly tableHolders: readonly Booking[];
  private optimiser?: TableOptimiser;
  private forecast?: DemandForecast;

  /**
   * `bookings` must include every reservation of the serviceDate (pacing) and, unless `context.range`
   * is given, every reservation holding a table around that day (the previous day's past-midnight
   * shifts included).
   */
  constructor(
    readonly config: VenueConfig,
    readonly serviceDate: string,
    bookings: readonly Booking[],
    readonly now: number,
    private readonly context: DayContext = {},
  ) {
    this.prepared = prepare(config);
    this.dayBookings = bookings.filter((b) => b.serviceDate === serviceDate && !isLapsedHold(b, now));
    this.occupancy = context.range?.occupancy ?? new Occupancy(bookings, now);
    this.tableHolders = context.range?.bookings ?? bookings;
    this.clock = serviceDayClock(config.venue.timezone, serviceDate);
    const today = instantToLocal(config.venue.timezone, now).date;
    const ahead = daysBetween(today, serviceDate);
    this.dateBookable = ahead >= 0 && ahead <= config.venue.bookingHorizonDays;
    const closedShiftIds = new Set<string>();
    let closedDay = false;
    for (const c of config.closures) {
      if (c.from > serviceDate || serviceDate > c.to) continue;
      if (c.shiftIds.length === 0) closedDay = true;
      for (const id of c.shiftIds) closedShiftIds.add(id);
    }
    this.dayShifts = closedDay
      ? []
      : shiftsOn(config.shifts, serviceDate)
          .filter((s) => !closedShiftIds.has(s.id))
          .sort((a, b) => shiftWindow(a).start - shiftWindow(b).start);
  }

  /** Whether a party can be booked at a local time, in the order of docs/reservations.md. */
  evaluate(time: string, partySize: number, options: EvaluateOptions = {}): Evaluation {
    if (!options.ignoreBookingWindow && !this.dateBookable) return { available: false, reason: 'no_shift' };
    const resolution = resolveServiceTime(this.config.shifts, this.config.closures, this.serviceDate, time);
    if (resolution.outcome !== 'open') return { available: false, reason: resolution.outcome };
    return this.evaluateInShift(resolution.shift!, resolution.minuteOfService, partySize, options);
  }

  private evaluateInShift(shift: ShiftSchedule, minuteOfService: number, partySize: number, options: EvaluateOptions): Evaluation {
    const window = shiftWindow(shift);
    const startsAt = this.clock(minuteOfService);
    if (!options.ignoreBookingWindow && startsAt < this.now + this.config.venue.minNoticeMinutes * MINUTE_MS) {
      return { available: false, reason: 'no_shift' };
    }
    const turn = resolveTurnTime(this.config, shift.id, this.serviceDate, partySize);
    if (!turn) return { available: false, reason: 'no_turn_time_rule' };
    const endsAt = startsAt + turn.minutes * MINUTE_MS;
    if (!isWritableSpan(startsAt, endsAt)) return { available: false, reason: 'no_shift' };
    const timing: Timing = {
      shiftId: shift.id,
      minuteOfService,
      startsAt,
      endsAt,
      turnTimeMinutes: turn.minutes,
      turnTimeSource: turn.source,
      overflowsShift: endsAt > this.clock(window.end),
    };
    let seatings = options.withoutTable ? [] : this.freeSeatings(partySize, startsAt, endsAt, options);
    let moves: TableMove[] = [];
    if (seatings === 'no_table' && this.mayMoveOthers(options)) {
      if (options.availableOnly && this.pacingFull(shift.id, window, minuteOfService, partySize, options.reservationId)) {
        return { available: false, reason: 'pacing_full', timing };
      }
      const found = this.tableOptimiser().find({ partySize, start: startsAt, end: endsAt });
      if (found) {
        seatings = [found.seating];
        moves = found.moves;
      }
    }
    if (!Array.isArray(seatings)) return { available: false, reason: seatings, timing };
    if (this.pacingFull(shift.id, window, minuteOfService, partySize, options.reservationId)) {
      return { available: false, reason: 'pacing_full', timing };
    }
    return { available: true, timing, seatings, moves };
  }

  /**
   * docs/reservations.md "Table optimisation": a new party's automatic choice, at a venue with
   * tableOptimisation on, may move others. A change of an existing reservation, an explicit table and
   * an import keep the other parties where they are.
   */
  private mayMoveOthers(options: EvaluateOptions): boolean {
    return (
      this.config.venue.tableOptimisation &&
      options.reservationId === undefined &&
      options.requestedSeatingId === undefined &&
      !options.withoutTable &&
      !options.keepOthersInPlace
    );
  }

  private tableOptimiser(): TableOptimiser {
    if (this.optimiser) return this.optimiser;
    const key = this.context.reservationsKey === undefined ? undefined : `${this.context.reservationsKey} ${this.serviceDate}`;
    const kept = key === undefined ? undefined : optimisers.get(key);
    if (kept && kept.config === this.config && kept.optimiser.holdsAt(this.now)) return (this.optimiser = kept.optimiser);
    this.optimiser = new TableOptimiser({
      seatings: this.prepared.seatings,
      bookings: this.tableHolders,
      now: this.now,
      areaOf: this.prepared.areaOf,
      serviceDate: this.serviceDate,
    });
    if (key !== undefined) optimisers.set(key, { config: this.config, optimiser: this.optimiser });
    return this.optimiser;
  }

  /**
   * Whether one table or combination can take the party over [start, end): an explicit change of
   * table of an existing reservation, whose time is not re-examined.
   */
  seatingVerdict(
    seatingId: string,
    partySize: number,
    start: number,
    end: number,
    reservationId: string,
  ): 'ok' | 'no_table' | 'table_blocked' {
    const verdict = this.freeSeatings(partySize, start, end, { requestedSeatingId: seatingId, reservationId });
    return Array.isArray(verdict) ? 'ok' : verdict;
  }

  private freeSeatings(partySize: number, start: number, end: number, options: EvaluateOptions): Seating[] | 'no_table' | 'table_blocked' {
    const { reservationId } = options;
    if (options.requestedSeatingId !== undefined) {
      const requested = this.prepared.seatingById.get(options.requestedSeatingId);
      if (!requested) return 'no_table';
      if (requested.isBlocked) return 'table_blocked';
      return fitsParty(requested, partySize) && this.occupancy.isFree(requested.tableIds, start, end, reservationId)
        ? [requested]
        : 'no_table';
    }
    const found: Seating[] = [];
    const usable = (s: Seating) => !s.isBlocked && fitsParty(s, partySize) && this.occupancy.isFree(s.tableIds, start, end, reservationId);
    const preferred = options.preferredSeatingId !== undefined ? this.prepared.seatingById.get(options.preferredSeatingId) : undefined;
    if (preferred && usable(preferred)) {
      found.push(preferred);
      if (!options.allSeatings) return found;
    }
    for (const s of this.prepared.seatings) {
      if (s === preferred || !usable(s)) continue;
      found.push(s);
      if (!options.allSeatings) break;
    }
    if (!found.length) return 'no_table';
    // The first seating's size is the proposal's (GET /availability asks for it alone): ranking by
    // packing keeps it, and only chooses among seatings of that size which one the booking takes.
    return preferred || !options.allSeatings || this.context.tableChoice === 'plan-order'
      ? found
      : this.byPacking(found, start, end, reservationId);
  }

  /**
   * docs/reservations.md "Which table": the seatings in the order of the plan (fewest seats first), and
   * among equals first the one that leaves the fewest dead minutes on its tables (an idle gap before
   * or after the party too short for the shortest turn time), then the one that leaves the fewest open
   * sides (packed end to end against other parties), then the one the parties still expected tonight
   * by the venue's demand curve need least, then the plan's order. A free run of evening stays whole
   * for a later party, on the tables the rest of the night asks for least.
   */
  private byPacking(found: Seating[], start: number, end: number, reservationId: string | undefined): Seating[] {
    const turn = this.prepared.shortestTurnMs;
    const forecast = this.demandForecast();
    const scored = found.map((seating, order) => {
      let dead = 0;
      let open = 0;
      for (const gap of this.occupancy.gapsAround(seating.tableIds, start, end, reservationId)) {
        if (gap > 0 && gap < turn) dead += gap;
        else if (gap >= turn) open++;
      }
      return { seating, order, dead, open, demand: undefined as number | undefined };
    });
    // Computed only for the seatings that tie up to it: most of the list is settled by size alone.
    const demandOf = (s: (typeof scored)[number]) =>
      (s.demand ??= forecast.isEmpty ? 0 : forecast.demandOn(s.seating.tableIds, start, end));
    scored.sort(
      (a, b) =>
        a.seating.maxSeats - b.seating.maxSeats || a.dead - b.dead || a.open - b.open || demandOf(a) - demandOf(b) || a.order - b.order,
    );
    return scored.map((s) => s.seating);
  }

  /** The parties the demand curve still expects on the day, placed at their times and turns: built once per VenueDay. */
  private demandForecast(): DemandForecast {
    if (this.forecast) return this.forecast;
    const spans = [];
    // A curve has a few dozen times and sizes: each time is resolved once, each turn once per shift and size.
    const starts = new Map<string, { shiftId: string; startsAt: number } | null>();
    const turns = new Map<string, number | null>();
    for (const expected of remainingDemand(this.context.demand ?? defaultDemandCurve, this.dayBookings)) {
      let start = starts.get(expected.time);
      if (start === undefined) {
        const resolution = resolveServiceTime(this.config.shifts, this.config.closures, this.serviceDate, expected.time);
        start = resolution.outcome === 'open' ? { shiftId: resolution.shift!.id, startsAt: this.clock(resolution.minuteOfService) } : null;
        starts.set(expected.time, start);
      }
      if (!start) continue;
      const turnKey = `${start.shiftId} ${expected.partySize}`;
      let turn = turns.get(turnKey);
      if (turn === undefined) {
        turn = resolveTurnTime(this.config, start.shiftId, this.serviceDate, expected.partySize)?.minutes ?? null;
        turns.set(turnKey, turn);
      }
      if (turn === null) continue;
      spans.push({
        partySize: expected.partySize,
        startsAt: start.startsAt,
        endsAt: start.startsAt + turn * MINUTE_MS,
        parties: expected.parties,
      });
    }
    return (this.forecast = new DemandForecast(spans, this.config.tables));
  }

  /**
   * Whether the reservation `reservationId`, a party at `time`, takes its pacing block over
   * maxCovers (itself counted once): for changes that make covers live again without the engine's
   * full evaluation (a no_show coming back, a table given to a reservation flagged for attention).
   * Blocks are those of every shift of the day, closures aside, as the invariant check counts them.
   */
  exceedsPacing(time: string, partySize: number, reservationId: string): boolean {
    const clock = minutesOf(time);
    for (const shift of shiftsOn(this.config.shifts, this.serviceDate)) {
      const window = shiftWindow(shift);
      const minute = clock < window.start ? clock + MINUTES_PER_DAY : clock;
      if (minute <= window.end && this.pacingFull(shift.id, window, minute, partySize, reservationId)) return true;
    }
    return false;
  }

  private pacingFull(shiftId: string, window: ShiftWindow, minuteOfService: number, partySize: number, reservationId?: string): boolean {
    const rules = this.prepared.pacingByShift.get(shiftId);
    if (!rules) return false;
    const own = reservationId === undefined ? undefined : this.dayBookings.find((b) => b.id === reservationId);
    for (const rule of rules) {
      if (rule.windowMinutes <= 0) continue;
      let covers = this.blockCovers.get(rule);
      if (!covers) this.blockCovers.set(rule, (covers = coversByBlock(rule, window, this.dayBookings)));
      const block = blockStartOf(rule, window, minuteOfService);
      let taken = covers.get(block) ?? 0;
      // The reservation being changed is not counted against itself.
      if (own && countsForPacing(own) && blockOfBooking(rule, window, own) === block) taken -= own.partySize;
      if (taken + partySize > rule.maxCovers) return true;
    }
    return false;
  }

  proposalOf(evaluation: Extract<Evaluation, { available: true }>): Proposal {
    const { timing } = evaluation;
    return {
      time: formatMinutes(timing.minuteOfService),
      startsAt: new Date(timing.startsAt).toISOString(),
      endsAt: new Date(timing.endsAt).toISOString(),
      turnTimeMinutes: timing.turnTimeMinutes,
      seats: evaluation.seatings[0].maxSeats,
      overflowsShift: timing.overflowsShift,
    };
  }

  /** Every grid time of the day's open shifts, in order (docs/reservations.md: start + k × interval up to lastSeating). */
  private grid(): { shift: ShiftSchedule; minuteOfService: number }[] {
    const interval = this.config.venue.slotIntervalMinutes;
    return this.dayShifts.flatMap((shift) => gridTimes(shift, interval).map((g) => ({ shift, minuteOfService: g.minuteOfService })));
  }

  private evaluateGrid(partySize: number, options: EvaluateOptions) {
    const base: EvaluateOptions = {
      reservationId: options.reservationId,
      ignoreBookingWindow: options.ignoreBookingWindow,
      availableOnly: true,
    };
    return (g: { shift: ShiftSchedule; minuteOfService: number }) =>
      !base.ignoreBookingWindow && !this.dateBookable
        ? ({ available: false, reason: 'no_shift' } as Evaluation)
        : this.evaluateInShift(g.shift, g.minuteOfService, partySize, base);
  }

  /** Every available grid time of the day (GET /availability/slots). */
  slots(partySize: number): Proposal[] {
    if (!this.dateBookable) return [];
    const evaluateAt = this.evaluateGrid(partySize, {});
    const proposals: Proposal[] = [];
    for (const g of this.grid()) {
      const e = evaluateAt(g);
      if (e.available) proposals.push(this.proposalOf(e));
    }
    return proposals;
  }

  /**
   * GET /availability/slots?include=unavailable (docs/reservations.md "Explained availability"): every grid time of the day's
   * shifts with the verdict GET /availability gives at that time (the same `evaluate`). Closed
   * shifts keep their grid, and each grid runs on past lastSeating to the shift's end, so that the
   * times a guest might ask for and cannot have say why: closed, after_last_seating…
   */
  explainSlots(partySize: number): ExplainedSlot[] {
    const interval = this.config.venue.slotIntervalMinutes;
    const minutes = new Set<number>();
    for (const shift of shiftsOn(this.config.shifts, this.serviceDate)) {
      const window = shiftWindow(shift);
      for (let m = window.start; m <= window.lastSeating || m < window.end; m += interval) minutes.add(m);
    }
    const times = new Set([...minutes].sort((a, b) => a - b).map(formatMinutes));
    return [...times].map((time) => {
      const e = this.evaluate(time, partySize);
      if (!e.available) return { time, available: false, reason: e.reason };
      const { time: _sameTime, ...proposal } = this.proposalOf(e);
      return { time, available: true, reason: 'available', ...proposal, turnTimeSource: e.timing.turnTimeSource };
    });
  }

  /** The number of available grid times (GET /availability/days). */
  countSlots(partySize: number): number {
    if (!this.dateBookable) return 0;
    const evaluateAt = this.evaluateGrid(partySize, {});
    let count = 0;
    for (const g of this.grid()) if (evaluateAt(g).available) count++;
    return count;
  }

  /** Up to 6 available grid times within ±120 minutes of `time`, nearest first, earlier first on ties. */
  alternatives(time: string, partySize: number, options: EvaluateOptions = {}): Proposal[] {
    const clock = minutesOf(time);
    const distance = (m: number) => Math.min(Math.abs(m - clock), Math.abs(m - clock - MINUTES_PER_DAY));
    const candidates = this.grid()
      .map((g) => ({ ...g, distance: distance(g.minuteOfService) }))
      .filter((g) => g.distance <= ALTERNATIVES_WINDOW_MINUTES && g.distance > 0)
      .sort((a, b) => a.distance - b.distance || a.minuteOfService - b.minuteOfService);
    const evaluateAt = this.evaluateGrid(partySize, options);
    const proposals: Proposal[] = [];
    for (const g of candidates) {
      const e = evaluateAt(g);
      if (!e.available) continue;
      proposals.push(this.proposalOf(e));
      if (proposals.length === MAX_ALTERNATIVES) break;
    }
    return proposals;
  }

  /** GET /availability: the verdict for one time, with alternatives when it is unavailable. */
  check(time: string, partySize: number, options: EvaluateOptions = {}): AvailabilityAnswer {
    const e = this.evaluate(time, partySize, options);
    if (e.available) return { available: true, reason: null, proposal: this.proposalOf(e), alternatives: [] };
    return { available: false, reason: e.reason, proposal: null, alternatives: this.alternatives(time, partySize, options) };
  }
}
