import { isLapsedHold, tableHoldingStatuses } from './occupancy.js';
import { fitsParty, type Seating } from './seatings.js';
import type { Booking } from './types.js';

const MINUTE_MS = 60_000;

/**
 * One reservation changing tables at its unchanged times. The engine knows the tables a reservation
 * holds, not which seating gave them: `fromSeatingId` is the seating with exactly those tables when
 * there is one, null otherwise.
 */
export interface TableMove {
  reservationId: string;
  /** The party as the plan saw it: a plan applied later checks it is still so. */
  partySize: number;
  startsAt: number;
  endsAt: number;
  fromSeatingId: string | null;
  fromTableIds: readonly string[];
  toSeating: Seating;
}

/**
 * Where the new party sits and who moves to make room. The moves hold only together (two parties may
 * swap tables): they are applied at once, with the new reservation, in one transaction.
 */
export interface OptimisedSeating {
  seating: Seating;
  moves: TableMove[];
}

/** A party about to arrive is not moved: its table may be laid, and the staff may have told the guest. */
export const MOVABLE_NOTICE_MINUTES = 30;

/**
 * Every move is a change the floor staff must carry out and may have to tell a guest about, so a
 * booking that needs more than a handful is better refused. The bound also keeps the search small: it
 * is exhaustive within the bound and its worst case grows as (fitting seatings)^depth; at 3 a full
 * 60-table floor with no answer is still refused within a few milliseconds
 * (bench/table-optimiser-engine.ts), while the usual cases (the fragmentation case: one move; a swap
 * or a short chain: two or three) are all found.
 */
export const MAX_MOVES = 3;

/**
 * Placements a search may try before it gives up (each is one step of the depth-first search). On
 * the 60-table floors of bench/table-optimiser-engine.ts no answer needs more than about 650 and a
 * refusal of a full dinner explores at most about 950, so this bound changes no answer there; it caps
 * the cost of one question (a few milliseconds) on a larger or stranger floor, where the search
 * within MAX_MOVES could grow as (fitting seatings)^3. Counted, not timed: the answer stays
 * deterministic.
 */
export const MAX_SEARCH_STEPS = 2000;

/** The floor and what holds its tables: everything but the request, shared by the requests of one day. */
export interface FloorState {
  /** orderedSeatings(config): the choice order. */
  seatings: readonly Seating[];
  /** Every reservation holding tables around the day; a locked table (Booking.tableLocked) is never moved. */
  bookings: readonly Booking[];
  now: number;
  /** The reservation being changed, if any: it neither blocks nor moves. */
  ignoreReservationId?: string;
  /** The area of a table (FloorTable.areaId): a moved party is kept in the area it sits in when possible. */
  areaOf?: (tableId: string) => string;
  /** The serviceDate of the request: when given, reservations of other serviceDates are never moved. */
  serviceDate?: string;
}

export interface SeatingRequest {
  partySize: number;
  start: number;
  end: number;
}

export type SeatingSearch = FloorState & SeatingRequest;

/** A reservation holding tables, or the new party once it is given its target. */
interface Party {
  id: string;
  partySize: number;
  start: number;
  end: number;
  /** The tables it holds before any move. */
  readonly origin: readonly string[];
  /** The tables it holds at this point of the search: `origin`, a new seating's, or null while it waits for one. */
  at: readonly string[] | null;
  movable: boolean;
}

/** A seating a party may move to, and who sat there over the party's times before the search began. */
interface Option {
  seating: Seating;
  occupants: readonly Party[];
  /** Per occupant, the seatings it had free before the search that do not touch this one: computed on first use. */
  freeElsewhere?: Seating[][];
}

function isMovable(b: Booking, search: FloorState): boolean {
  return (
    (b.status === 'created' || b.status === 'confirmed') &&
    !b.tableLocked &&
    b.startsAt >= search.now + MOVABLE_NOTICE_MINUTES * MINUTE_MS &&
    (search.serviceDate === undefined || b.serviceDate === search.serviceDate)
  );
}

const overlaps = (a: { start: number; end: number }, b: { start: number; end: number }) => a.start < b.end && b.start < a.end;
const stillAtOrigin = (p: Party) => p.at === p.origin;

/**
 * The parties at each table before any move, with the rules of Occupancy (a seated party past its end
 * keeps its table). Every list is short: the day's turns at one table.
 */
function indexByTable(search: FloorState): Map<string, Party[]> {
  const byTable = new Map<string, Party[]>();
  for (const b of search.bookings) {
    if (b.id === search.ignoreReservationId || !b.tableIds.length || !tableHoldingStatuses.has(b.status) || isLapsedHold(b, search.now))
      continue;
    const end = b.status === 'seated' && b.endsAt <= search.now ? Number.POSITIVE_INFINITY : b.endsAt;
    const party: Party = {
      id: b.id,
      partySize: b.partySize,
      start: b.startsAt,
      end,
      origin: b.tableIds,
      at: b.tableIds,
      movable: isMovable(b, search),
    };
    for (const tableId of b.tableIds) {
      let list = byTable.get(tableId);
      if (!list) byTable.set(tableId, (list = []));
      list.push(party);
    }
  }
  return byTable;
}

/** The earliest instant after `now` at which a booking's place in the index would differ (see indexByTable and isMovable). */
function changesAfter({ bookings, now }: FloorState): number {
  let until = Number.POSITIVE_INFINITY;
  const consider = (instant: number) => {
    if (instant > now && instant < until) until = instant;
  };
  for (const b of bookings) {
    if (!b.tableIds.length) continue;
    consider(b.startsAt - MOVABLE_NOTICE_MINUTES * MINUTE_MS);
    if (b.expiresAt !== undefined) consider(b.expiresAt);
    if (b.status === 'seated') consider(b.endsAt);
  }
  return until;
}

const tableSetKey = (tableIds: readonly string[]) => [...tableIds].sort().join('\u0000');

/**
 * What sat where before any move, read once per floor state and shared by every request on it: the
 * parties at each table and, per party, the seatings it may move to (which do not depend on the
 * request: the new party is not on the floor yet). A day's grid times (GET /availability/slots, the
 * alternatives of a refusal) ask about the same parties again and again.
 */
class FloorIndex {
  readonly byTable: Map<string, Party[]>;
  readonly seatingIdByTables = new Map<string, string>();
  private readonly fittingBySize = new Map<number, Seating[]>();
  private readonly tablesFittingBySize = new Map<number, Set<string>>();
  private readonly optionsByParty = new Map<Party, Option[]>();
  private readonly freeOptionsByParty = new Map<Party, Option[]>();

  /** The first instant at which `now` changes what this index says (a party no longer movable, a hold lapsing, a seated party overstaying). */
  readonly validUntil: number;

  /** Seats of each table of the floor. */
  private readonly seatsOfTable = new Map<string, number>();

  constructor(readonly floor: FloorState) {
    this.byTable = indexByTable(floor);
    for (const s of floor.seatings) if (s.kind === 'table') this.seatsOfTable.set(s.tableIds[0], s.maxSeats);
    this.validUntil = changesAfter(floor);
    for (const s of floor.seatings) {
      const key = tableSetKey(s.tableIds);
      if (!this.seatingIdByTables.has(key)) this.seatingIdByTables.set(key, s.id);
    }
  }

  /**
   * The parties on these tables over `party`'s times before any move (the party itself aside), each
   * once, in a fixed order whatever the order of the input; null when one of them may not move.
   */
  occupantsOf(tableIds: readonly string[], party: Pick<Party, 'start' | 'end'>): Party[] | null {
    const found: Party[] = [];
    for (const tableId of tableIds) {
      for (const p of this.byTable.get(tableId) ?? []) {
        if (p === party || !overlaps(p, party)) continue;
        if (!p.movable) return null;
        if (!found.includes(p)) found.push(p);
      }
    }
    // The largest party first: it has the fewest places to go, so a dead end shows early.
    return found.sort((a, b) => b.partySize - a.partySize || a.start - b.start || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  freeOptionsOf(party: Party): Option[] {
    let options = this.freeOptionsByParty.get(party);
    if (!options) {
      options = this.optionsOf(party).filter((o) => o.occupants.length === 0);
      this.freeOptionsByParty.set(party, options);
    }
    return options;
  }

  /**
   * The seatings a party may move to, no larger than the seats it holds, those in the area it sits in first, each group in choice order;
   * a seating shared over its times with a party that may not move, or with more parties than the
   * bound allows to move along with it, is none.
   */
  optionsOf(party: Party): Option[] {
    let options = this.optionsByParty.get(party);
    if (options) return options;
    // A party is never moved to more seats than it holds: that would seat one party by taking seats
    // from the rest of the night (bench/table-optimisation.ts: −3 % covers on the 60-table floor
    // at 80 and 110 % demand when allowed, +1.5 and +3 % without).
    const held = party.origin.reduce((seats, t) => seats + (this.seatsOfTable.get(t) ?? 0), 0);
    const fitting = this.fitting(party.partySize).filter((s) => s.maxSeats <= held);
    const { areaOf } = this.floor;
    let candidates = fitting;
    if (areaOf) {
      const areas = new Set(party.origin.map(areaOf));
      const inArea = (s: Seating) => s.tableIds.every((t) => areas.has(areaOf(t)));
      candidates = [...fitting.filter(inArea), ...fitting.filter((s) => !inArea(s))];
    }
    options = [];
    for (const seating of candidates) {
      const occupants = this.occupantsOf(seating.tableIds, party);
      if (occupants && occupants.length < MAX_MOVES) options.push({ seating, occupants });
    }
    this.optionsByParty.set(party, options);
    return options;
  }

  fitting(partySize: number): Seating[] {
    let fitting = this.fittingBySize.get(partySize);
    if (!fitting) {
      fitting = this.floor.seatings.filter((s) => !s.isBlocked && fitsParty(s, partySize));
      this.fittingBySize.set(partySize, fitting);
    }
    return fitting;
  }

  tablesFitting(partySize: number): Set<string> {
    let tables = this.tablesFittingBySize.get(partySize);
    if (!tables) {
      tables = new Set(this.fitting(partySize).flatMap((s) => s.tableIds));
      this.tablesFittingBySize.set(partySize, tables);
    }
    return tables;
  }
}

/**
 * A depth-bounded search for new places for the parties in the way. What sat where before the search
 * is read once per party (its options); the search itself only tracks who has left their tables and
 * the few places it has handed out, so that a floor with no answer is refused quickly.
 */
class Relocation {
  /** The new party first, then every moved party, in the order they were placed. */
  private readonly placed: { party: Party; seating: Seating }[] = [];
  private steps = 0;

  /** MAX_SEARCH_STEPS were tried: the search is over, without answer. */
  get exhausted(): boolean {
    return this.steps >= MAX_SEARCH_STEPS;
  }

  constructor(private readonly index: FloorIndex) {}

  /** Seats the new party on `seating` and looks for places for `blockers` (its occupants) within `budget` moves. */
  tryTarget(newcomer: Party, seating: Seating, blockers: readonly Party[], budget: number): boolean {
    for (const b of blockers) b.at = null;
    newcomer.at = seating.tableIds;
    this.placed.push({ party: newcomer, seating });
    if (this.relocate(blockers, budget)) return true;
    this.placed.pop();
    for (const b of blockers) b.at = b.origin;
    return false;
  }

  /** The moves of the answer found; every party is back at its origin afterwards, for the next request on the same floor. */
  takeMoves(): TableMove[] {
    const moves = this.placed.slice(1).map(({ party, seating }) => {
      party.at = party.origin;
      return {
        reservationId: party.id,
        partySize: party.partySize,
        startsAt: party.start,
        endsAt: party.end,
        fromSeatingId: this.index.seatingIdByTables.get(tableSetKey(party.origin)) ?? null,
        fromTableIds: party.origin,
        toSeating: seating,
      };
    });
    this.placed.length = 0;
    return moves;
  }

  /** New places for every party of `pending` (all waiting for one) in at most `budget` moves. */
  private relocate(pending: readonly Party[], budget: number): boolean {
    if (pending.length === 0) return true;
    if (this.exhausted) return false;
    this.steps++;
    const [party, ...rest] = pending;
    if (budget === 1) return this.placeFree(party);
    for (const option of this.index.optionsOf(party)) {
      if (this.exhausted) return false;
      const { seating } = option;
      const displaced = option.occupants.every(stillAtOrigin) ? option.occupants : option.occupants.filter(stillAtOrigin);
      // Every party still without a place costs at least one move.
      const spare = budget - 1 - displaced.length - rest.length;
      if (spare < 0 || this.isTakenByPlaced(seating.tableIds, party)) continue;
      if (spare === 0 && !this.mayAllFindFreePlaces(option, displaced, party, rest)) continue;
      for (const d of displaced) d.at = null;
      party.at = seating.tableIds;
      this.placed.push({ party, seating });
      if (this.relocate([...displaced, ...rest], budget - 1)) return true;
      this.placed.pop();
      party.at = null;
      for (const d of displaced) d.at = d.origin;
    }
    return false;
  }

  private isTakenByPlaced(tableIds: readonly string[], party: Party): boolean {
    for (const { party: q } of this.placed) {
      if (!overlaps(q, party)) continue;
      for (const t of q.at!) if (tableIds.includes(t)) return true;
    }
    return false;
  }

  /**
   * Whether every party `mover` would displace by taking `option` could still go straight to a free
   * seating: one free before the search (the party itself aside: its own tables are among them) that
   * neither the mover nor anyone placed has taken, or one using a table that a party gone from its
   * place (placed, waiting, or displaced along with it) leaves free. Checked before a branch where
   * everyone left must go straight to a free seating, it spares the branches where someone has nowhere
   * to go, most of them on a full floor.
   */
  private mayAllFindFreePlaces(option: Option, displaced: readonly Party[], mover: Party, rest: readonly Party[]): boolean {
    const { seating, occupants } = option;
    option.freeElsewhere ??= occupants.map((o) =>
      this.index
        .freeOptionsOf(o)
        .map((free) => free.seating)
        .filter((s) => !s.tableIds.some((t) => seating.tableIds.includes(t))),
    );
    let leavers: Party[] | undefined;
    // Loops rather than closures: this runs for most branches of a search without answer.
    next: for (let i = 0; i < occupants.length; i++) {
      const party = occupants[i];
      if (!stillAtOrigin(party)) continue;
      for (const s of option.freeElsewhere[i]) if (!this.isTakenByPlaced(s.tableIds, party)) continue next;
      const fittingTables = this.index.tablesFitting(party.partySize);
      leavers ??= [mover, ...rest, ...displaced, ...this.placed.map((p) => p.party)];
      for (const left of leavers) {
        if (left === party) continue;
        for (const t of left.origin) {
          if (fittingTables.has(t) && !seating.tableIds.includes(t) && this.isFreeNow(t, party, displaced)) continue next;
        }
      }
      return false;
    }
    return true;
  }

  /**
   * The last move of a branch: the party takes a seating free now, which was free before the search
   * (the party itself aside) or uses a table a moved party has left and nobody has taken since. On a
   * full floor few parties had a free seating and few tables are left by others, so most branches end
   * here without looking at every seating.
   */
  private placeFree(party: Party): boolean {
    const fittingTables = this.index.tablesFitting(party.partySize);
    const tablesLeft = this.placed.some(({ party: left }) => left.origin.some((t) => fittingTables.has(t) && this.isFreeNow(t, party, [])));
    const options = tablesLeft ? this.index.optionsOf(party) : this.index.freeOptionsOf(party);
    for (const { seating, occupants } of options) {
      if (occupants.some(stillAtOrigin) || this.isTakenByPlaced(seating.tableIds, party)) continue;
      party.at = seating.tableIds;
      this.placed.push({ party, seating });
      return true;
    }
    return false;
  }

  /** No one is at the table over the party's times, the party itself and `leaving` aside. */
  private isFreeNow(tableId: string, party: Party, leaving: readonly Party[]): boolean {
    for (const p of this.index.byTable.get(tableId) ?? []) {
      if (p !== party && stillAtOrigin(p) && overlaps(p, party) && !leaving.includes(p)) return false;
    }
    for (const { party: q } of this.placed) if (overlaps(q, party) && q.at!.includes(tableId)) return false;
    return true;
  }
}

/**
 * The optimiser over one floor state: the parties are indexed once, for every request of a day (the
 * grid times of GET /availability/slots ask many). Deterministic: the same floor, reservations and
 * request give the same answer whatever the order of the input.
 */
export class TableOptimiser {
  private readonly index: FloorIndex;
  /** Answers by request: the same question on the same floor state has the same answer. */
  private readonly answers = new Map<string, OptimisedSeating | null>();

  constructor(floor: FloorState) {
    this.index = new FloorIndex(floor);
  }

  /** Whether the answers hold at `now` too: nothing the index depends on has changed between its `now` and this one. */
  holdsAt(now: number): boolean {
    return now >= this.index.floor.now && now < this.index.validUntil;
  }

  /**
   * A seating for a new party over [start, end), moving at most MAX_MOVES other reservations to other
   * tables at their same times when no seating is free. A free seating wins and is the one
   * VenueDay.freeSeatings picks; otherwise the fewest moves win, then the target with the fewest parties
   * in the way, then choice order, each moved party going preferably to its own area, then in choice
   * order. Null when nothing is found within the bound.
   */
  find(request: SeatingRequest): OptimisedSeating | null {
    const key = `${request.partySize} ${request.start} ${request.end}`;
    let answer = this.answers.get(key);
    if (answer === undefined) {
      answer = this.search(request);
      this.answers.set(key, answer);
    }
    return answer;
  }

  private search({ partySize, start, end }: SeatingRequest): OptimisedSeating | null {
    const relocation = new Relocation(this.index);
    const newcomer: Party = { id: '', partySize, start, end, origin: [], at: null, movable: false };
    const targets: { seating: Seating; blockers: Party[] }[] = [];
    for (const seating of this.index.fitting(partySize)) {
      const blockers = this.index.occupantsOf(seating.tableIds, newcomer);
      if (blockers === null) continue;
      if (blockers.length === 0) return { seating, moves: [] };
      if (blockers.length <= MAX_MOVES) targets.push({ seating, blockers });
    }
    // A stable sort: among targets with as many parties in the way, the choice order stays.
    targets.sort((a, b) => a.blockers.length - b.blockers.length);
    // Iterative deepening: a solution found within a budget of k moves, none having been found within
    // k - 1, has the fewest moves there are.
    for (let budget = 1; budget <= MAX_MOVES; budget++) {
      for (const { seating, blockers } of targets) {
        if (blockers.length > budget) break;
        if (relocation.tryTarget(newcomer, seating, blockers, budget)) return { seating, moves: relocation.takeMoves() };
        if (relocation.exhausted) return null;
      }
    }
    return null;
  }
}

/** One request on a floor: TableOptimiser.find for a single question. */
export function findSeatingWithMoves(search: SeatingSearch): OptimisedSeating | null {
  return new TableOptimiser(search).find(search);
}
