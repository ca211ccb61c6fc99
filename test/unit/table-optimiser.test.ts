import { describe, expect, it } from 'vitest';
import { tableHoldingStatuses } from '../../src/lib/availability/occupancy.js';
import { fitsParty, orderedSeatings, type Seating } from '../../src/lib/availability/seatings.js';
import {
  MAX_MOVES,
  MOVABLE_NOTICE_MINUTES,
  TableOptimiser,
  findSeatingWithMoves,
  type OptimisedSeating,
} from '../../src/lib/availability/table-optimiser.js';
import type { Booking, FloorTable, ReservationStatus, TableCombination } from '../../src/lib/availability/types.js';
import { mulberry32 } from '../support/seeded-random.js';

const MINUTE_MS = 60_000;
const serviceDate = '2030-03-01';
const at = (hhmm: string) => Date.parse(`${serviceDate}T${hhmm}:00Z`);
const noon = at('12:00');

function table(id: string, minSeats: number, maxSeats: number, areaId = 'main', isBlocked = false): FloorTable {
  return { id, name: id, areaId, areaPosition: areaId === 'main' ? 0 : 1, minSeats, maxSeats, isBlocked };
}

function booking(id: string, partySize: number, tableIds: string[], extra: Partial<Booking> = {}): Booking {
  return {
    id,
    serviceDate,
    time: '19:00',
    partySize,
    status: 'confirmed',
    startsAt: at('19:00'),
    endsAt: at('21:00'),
    tableIds,
    tableLocked: false,
    ...extra,
  };
}

interface Scene {
  tables: FloorTable[];
  combinations?: TableCombination[];
  bookings: Booking[];
  partySize: number;
  start?: number;
  end?: number;
  now?: number;
  ignoreReservationId?: string;
}

function solve(scene: Scene): OptimisedSeating | null {
  const areaById = new Map(scene.tables.map((t) => [t.id, t.areaId]));
  return findSeatingWithMoves({
    seatings: orderedSeatings({ tables: scene.tables, combinations: scene.combinations ?? [] }),
    bookings: scene.bookings,
    partySize: scene.partySize,
    start: scene.start ?? at('19:00'),
    end: scene.end ?? at('21:00'),
    now: scene.now ?? noon,
    ignoreReservationId: scene.ignoreReservationId,
    areaOf: (id) => areaById.get(id)!,
    serviceDate,
  });
}

/** The seating and the moves as [reservation, to] pairs: what the cases below pin. */
function outline(result: OptimisedSeating | null) {
  return result && { seating: result.seating.id, moves: result.moves.map((m) => [m.reservationId, m.toSeating.id]) };
}

// Two two-tops and two four-tops, all in the main room.
const smallRoom = [table('T2a', 1, 2), table('T2b', 1, 2), table('F1', 2, 4), table('F2', 2, 4)];
const couplesOnFourTops = (extra: Partial<Booking> = {}) => [booking('r1', 2, ['F1'], extra), booking('r2', 2, ['F2'], extra)];
// Tables seating 1 to k: each party can only step down one table, so a chain is forced.
const ladder = (size: number) => Array.from({ length: size }, (_, i) => table(`L${i + 1}`, 1, i + 1));
const ladderParties = (size: number) => Array.from({ length: size - 1 }, (_, i) => booking(`p${i + 1}`, i + 1, [`L${i + 2}`]));

const cases: { name: string; scene: Scene; expected: ReturnType<typeof outline> }[] = [
  {
    name: 'a free table: no moves, the first in choice order',
    scene: { tables: smallRoom, bookings: [], partySize: 2 },
    expected: { seating: 'T2a', moves: [] },
  },
  {
    name: 'a free four-top is taken rather than moving anyone',
    scene: { tables: smallRoom, bookings: [booking('r1', 2, ['F1'])], partySize: 4 },
    expected: { seating: 'F2', moves: [] },
  },
  {
    name: 'fragmentation: one couple moves from a four-top to a free two-top',
    scene: { tables: smallRoom, bookings: couplesOnFourTops(), partySize: 4 },
    expected: { seating: 'F1', moves: [['r1', 'T2a']] },
  },
  {
    name: 'a moved party stays in its area when it can (the terrace two-top comes first in choice order)',
    scene: {
      tables: [table('T2a', 1, 2, 'terrace'), table('T2b', 1, 2), table('F1', 2, 4), table('F2', 2, 4)],
      bookings: couplesOnFourTops(),
      partySize: 4,
    },
    expected: { seating: 'F1', moves: [['r1', 'T2b']] },
  },
  {
    name: 'the fewest moves win over choice order',
    scene: {
      tables: smallRoom,
      bookings: [
        booking('r1', 2, ['F1'], { endsAt: at('20:00') }),
        booking('r2', 2, ['F1'], { startsAt: at('20:00') }),
        booking('r3', 2, ['F2']),
      ],
      partySize: 4,
    },
    expected: { seating: 'F2', moves: [['r3', 'T2a']] },
  },
  {
    name: 'locked blockers are never moved',
    scene: { tables: smallRoom, bookings: couplesOnFourTops({ tableLocked: true }), partySize: 4 },
    expected: null,
  },
  {
    name: 'a locked blocker rules its table out, not the other one',
    scene: { tables: smallRoom, bookings: [booking('r1', 2, ['F1'], { tableLocked: true }), booking('r2', 2, ['F2'])], partySize: 4 },
    expected: { seating: 'F2', moves: [['r2', 'T2a']] },
  },
  {
    name: `a party starting in less than ${MOVABLE_NOTICE_MINUTES} minutes is not moved`,
    scene: { tables: smallRoom, bookings: couplesOnFourTops(), partySize: 4, now: at('18:31') },
    expected: null,
  },
  {
    name: `a party starting in exactly ${MOVABLE_NOTICE_MINUTES} minutes may be moved`,
    scene: { tables: smallRoom, bookings: couplesOnFourTops(), partySize: 4, now: at('18:30') },
    expected: { seating: 'F1', moves: [['r1', 'T2a']] },
  },
  {
    name: 'arrived parties are not moved',
    scene: { tables: smallRoom, bookings: couplesOnFourTops({ status: 'arrived' }), partySize: 4 },
    expected: null,
  },
  {
    name: 'seated parties are not moved',
    scene: { tables: smallRoom, bookings: couplesOnFourTops({ status: 'seated' }), partySize: 4 },
    expected: null,
  },
  {
    name: 'reservations of another serviceDate are not moved',
    scene: { tables: smallRoom, bookings: couplesOnFourTops({ serviceDate: '2030-02-28' }), partySize: 4 },
    expected: null,
  },
  {
    name: 'a moved party must fit: a party of 4 does not go to a two-top',
    scene: { tables: [...smallRoom, table('S1', 5, 6)], bookings: [booking('r1', 4, ['F1']), booking('r2', 4, ['F2'])], partySize: 4 },
    expected: null,
  },
  {
    name: 'a party is never moved to more seats than it holds: the couple on the two-top stays, the single guest is refused',
    scene: { tables: [table('T2a', 1, 2), table('F1', 2, 4)], bookings: [booking('r1', 2, ['T2a'])], partySize: 1 },
    expected: null,
  },
  {
    name: 'a party may move to as many seats as it holds: a couple goes from a two-top to another',
    scene: { tables: [table('T2a', 1, 2), table('T2b', 2, 2), table('F1', 2, 4)], bookings: [booking('r1', 2, ['T2a'])], partySize: 1 },
    expected: { seating: 'T2a', moves: [['r1', 'T2b']] },
  },
  {
    name: 'a chain: the moved party displaces a couple, which goes to a two-top',
    scene: {
      tables: [table('T2', 1, 2), table('F1', 2, 4), table('S1', 5, 6)],
      bookings: [booking('r1', 4, ['S1']), booking('r2', 2, ['F1'])],
      partySize: 6,
    },
    expected: {
      seating: 'S1',
      moves: [
        ['r1', 'F1'],
        ['r2', 'T2'],
      ],
    },
  },
  {
    name: `a chain of ${MAX_MOVES} moves is found`,
    scene: { tables: ladder(MAX_MOVES + 1), bookings: ladderParties(MAX_MOVES + 1), partySize: MAX_MOVES + 1 },
    expected: {
      seating: `L${MAX_MOVES + 1}`,
      moves: Array.from({ length: MAX_MOVES }, (_, i) => [`p${MAX_MOVES - i}`, `L${MAX_MOVES - i}`]),
    },
  },
  {
    name: `a chain of ${MAX_MOVES + 1} moves is beyond the bound`,
    scene: { tables: ladder(MAX_MOVES + 2), bookings: ladderParties(MAX_MOVES + 2), partySize: MAX_MOVES + 2 },
    expected: null,
  },
  {
    name: 'the reservation being changed neither blocks nor moves',
    scene: { tables: smallRoom, bookings: couplesOnFourTops(), partySize: 4, ignoreReservationId: 'r2' },
    expected: { seating: 'F2', moves: [] },
  },
  {
    name: 'a lapsed hold takes no table',
    scene: {
      tables: smallRoom,
      bookings: [booking('r1', 2, ['F1'], { status: 'created', expiresAt: at('11:00') }), booking('r2', 2, ['F2'])],
      partySize: 4,
    },
    expected: { seating: 'F1', moves: [] },
  },
  {
    name: 'a party leaving when the request starts is not in its way',
    scene: { tables: smallRoom, bookings: couplesOnFourTops({ tableLocked: true }), partySize: 4, start: at('21:00'), end: at('23:00') },
    expected: { seating: 'F1', moves: [] },
  },
];

describe('findSeatingWithMoves', () => {
  it.each(cases)('$name', ({ scene, expected }) => {
    expect(outline(solve(scene))).toEqual(expected);
  });

  it('reports where a moved party comes from', () => {
    const moves = solve({
      tables: smallRoom,
      combinations: [{ id: 'C', tableIds: ['F2', 'T2b'] }],
      bookings: [booking('r1', 2, ['F1']), booking('r2', 6, ['T2b', 'F2'])],
      partySize: 4,
    })?.moves;
    expect(moves).toEqual([
      {
        reservationId: 'r1',
        partySize: 2,
        startsAt: at('19:00'),
        endsAt: at('21:00'),
        fromSeatingId: 'F1',
        fromTableIds: ['F1'],
        toSeating: expect.objectContaining({ id: 'T2a' }),
      },
    ]);
  });
});

// ---- Random floors ----

const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)];
const slots = Array.from({ length: 17 }, (_, i) => at('18:00') + i * 15 * MINUTE_MS);
const evening = at('17:45');

/** Whether a booking takes its tables, and until when: the rules of Occupancy, written again independently. */
function heldSpan(b: Booking, now: number): { start: number; end: number } | null {
  if (!b.tableIds.length || !tableHoldingStatuses.has(b.status) || (b.expiresAt !== undefined && b.expiresAt <= now)) return null;
  return { start: b.startsAt, end: b.status === 'seated' && b.endsAt <= now ? Number.POSITIVE_INFINITY : b.endsAt };
}

function isFreeOn(bookings: readonly Booking[], tableIds: readonly string[], start: number, end: number, now: number): boolean {
  return bookings.every((b) => {
    const span = heldSpan(b, now);
    return !span || span.start >= end || start >= span.end || !b.tableIds.some((t) => tableIds.includes(t));
  });
}

interface RandomFloor {
  seatings: Seating[];
  bookings: Booking[];
  areaOf: (tableId: string) => string;
}

/** A floor of 2/4/6/8 tops in three areas with combinations, and the bookings seated on it first-fit. */
function randomFloor(random: () => number, tableCount: number, bookingCount: number): RandomFloor {
  const tops = [
    { max: 2, min: 1 },
    { max: 2, min: 1 },
    { max: 4, min: 2 },
    { max: 4, min: 2 },
    { max: 6, min: 3 },
    { max: 8, min: 5 },
  ];
  const tables: FloorTable[] = Array.from({ length: tableCount }, (_, i) => {
    const top = pick(random, tops);
    return {
      id: `t${i}`,
      name: `T${String(i).padStart(2, '0')}`,
      areaId: `a${i % 3}`,
      areaPosition: i % 3,
      minSeats: top.min,
      maxSeats: top.max,
      isBlocked: random() < 0.04,
    };
  });
  // Overlapping combinations (a pair, and every other time the trio around it too), so that parties leave
  // or take part of a combination's tables.
  const combinations: TableCombination[] = Array.from({ length: Math.floor(tableCount / 3) }, (_, i) => [
    { id: `c${i}`, tableIds: [`t${3 * i}`, `t${3 * i + 1}`] },
    ...(i % 2 ? [{ id: `c${i}t`, tableIds: [`t${3 * i}`, `t${3 * i + 1}`, `t${3 * i + 2}`] }] : []),
  ]).flat();
  const seatings = orderedSeatings({ tables, combinations });
  const bookings: Booking[] = [];
  const statuses: ReservationStatus[] = [
    'confirmed',
    'confirmed',
    'confirmed',
    'confirmed',
    'created',
    'created',
    'arrived',
    'seated',
    'cancelled',
    'completed',
  ];
  for (let i = 0; i < bookingCount; i++) {
    const partySize = pick(random, [1, 2, 2, 2, 2, 3, 4, 4, 4, 5, 6, 8]);
    const status = pick(random, statuses);
    // Some parties seated in the afternoon are still at their table: it stays taken all evening.
    const early = status === 'seated' && random() < 0.3;
    const startsAt = early ? at('16:00') : pick(random, slots);
    const endsAt = startsAt + pick(random, [90, 120, 120]) * MINUTE_MS;
    const hold =
      status === 'created' && random() < 0.3 ? { expiresAt: random() < 0.5 ? evening - MINUTE_MS : evening + 10 * MINUTE_MS } : {};
    const b: Booking = {
      id: `b${i}`,
      serviceDate,
      time: '',
      partySize,
      status,
      startsAt,
      endsAt,
      tableIds: [],
      tableLocked: random() < 0.15,
      ...hold,
    };
    const span = heldSpan({ ...b, tableIds: ['any'] }, evening);
    const free = span
      ? seatings.find((s) => !s.isBlocked && fitsParty(s, partySize) && isFreeOn(bookings, s.tableIds, span.start, span.end, evening))
      : pick(random, seatings);
    bookings.push(free ? { ...b, tableIds: free.tableIds } : b);
  }
  const areaById = new Map(tables.map((t) => [t.id, t.areaId]));
  return { seatings, bookings, areaOf: (id) => areaById.get(id)! };
}

function isMovable(b: Booking, now: number): boolean {
  return (
    (b.status === 'created' || b.status === 'confirmed') &&
    !b.tableLocked &&
    b.startsAt >= now + MOVABLE_NOTICE_MINUTES * MINUTE_MS &&
    heldSpan(b, now) !== null
  );
}

function shuffled<T>(random: () => number, items: readonly T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j], copy[i]];
  }
  return copy;
}

function randomRequest(random: () => number) {
  const start = pick(random, slots);
  return { partySize: pick(random, [2, 3, 4, 4, 4, 5, 6]), start, end: start + 120 * MINUTE_MS };
}

/**
 * A row of two- and four-tops where every neighbouring pair is a combination and every other trio too,
 * filled at random: parties leave and take parts of one another's combinations, the cases where a
 * shortcut of the search is easiest to get wrong.
 */
function combinationFloor(random: () => number, tableCount: number, bookingCount: number): RandomFloor {
  const tables = Array.from({ length: tableCount }, (_, i) => table(`t${i}`, 1, random() < 0.7 ? 2 : 4));
  const combinations: TableCombination[] = [];
  for (let i = 0; i + 1 < tableCount; i++) {
    combinations.push({ id: `p${i}`, tableIds: [`t${i}`, `t${i + 1}`] });
    if (i % 2 && i + 2 < tableCount) combinations.push({ id: `q${i}`, tableIds: [`t${i}`, `t${i + 1}`, `t${i + 2}`] });
  }
  const seatings = orderedSeatings({ tables, combinations });
  const bookings: Booking[] = [];
  for (let i = 0; i < bookingCount; i++) {
    const partySize = pick(random, [1, 2, 2, 3, 4, 5, 6]);
    const startsAt = pick(random, slots);
    const endsAt = startsAt + 120 * MINUTE_MS;
    const free = seatings.filter((s) => fitsParty(s, partySize) && isFreeOn(bookings, s.tableIds, startsAt, endsAt, evening));
    const tableIds = free.length ? pick(random, free).tableIds : [];
    bookings.push({
      id: `b${i}`,
      serviceDate,
      time: '',
      partySize,
      status: 'confirmed',
      startsAt,
      endsAt,
      tableIds,
      tableLocked: random() < 0.1,
    });
  }
  return { seatings, bookings, areaOf: () => 'main' };
}

/** The search of the contract, written as plainly as possible: every branch within the bound, in the same order. */
function searchExhaustively(
  floor: RandomFloor,
  request: { partySize: number; start: number; end: number },
  now: number,
): ReturnType<typeof outline> {
  interface Holder {
    id: string;
    partySize: number;
    span: { start: number; end: number };
    origin: readonly string[];
    at: readonly string[] | null;
    movable: boolean;
  }
  const holders: Holder[] = floor.bookings.flatMap((b) => {
    const span = heldSpan(b, now);
    return span ? [{ id: b.id, partySize: b.partySize, span, origin: b.tableIds, at: b.tableIds, movable: isMovable(b, now) }] : [];
  });
  const newcomer: Holder = { id: '', partySize: request.partySize, span: request, origin: [], at: null, movable: false };
  const everyone = [...holders, newcomer];
  const moved = new Set<Holder>();
  const moves: [string, string][] = [];
  const occupantsOf = (tableIds: readonly string[], h: Holder) =>
    everyone
      .filter((o) => o !== h && o.at && o.span.start < h.span.end && h.span.start < o.span.end && o.at.some((t) => tableIds.includes(t)))
      .sort((a, b) => b.partySize - a.partySize || a.span.start - b.span.start || (a.id < b.id ? -1 : 1));
  const candidatesOf = (h: Holder) => {
    const seatsOf = (t: string) => floor.seatings.find((s) => s.kind === 'table' && s.tableIds[0] === t)?.maxSeats ?? 0;
    const held = h.origin.reduce((n, t) => n + seatsOf(t), 0);
    const fitting = floor.seatings.filter((s) => !s.isBlocked && fitsParty(s, h.partySize) && s.maxSeats <= held);
    const areas = new Set(h.origin.map(floor.areaOf));
    const inArea = (s: Seating) => s.tableIds.every((t) => areas.has(floor.areaOf(t)));
    return [...fitting.filter(inArea), ...fitting.filter((s) => !inArea(s))];
  };
  const relocate = (pending: Holder[], budget: number): boolean => {
    if (!pending.length) return true;
    const [h, ...rest] = pending;
    for (const seating of candidatesOf(h)) {
      const occupants = occupantsOf(seating.tableIds, h);
      if (occupants.some((o) => !o.movable || moved.has(o)) || 1 + occupants.length + rest.length > budget) continue;
      for (const o of occupants) o.at = null;
      h.at = seating.tableIds;
      moved.add(h);
      moves.push([h.id, seating.id]);
      if (relocate([...occupants, ...rest], budget - 1)) return true;
      moves.pop();
      moved.delete(h);
      h.at = null;
      for (const o of occupants) o.at = o.origin;
    }
    return false;
  };
  const targets: { seating: Seating; blockers: Holder[] }[] = [];
  for (const seating of floor.seatings.filter((s) => !s.isBlocked && fitsParty(s, request.partySize))) {
    const blockers = occupantsOf(seating.tableIds, newcomer);
    if (blockers.some((o) => !o.movable)) continue;
    if (!blockers.length) return { seating: seating.id, moves: [] };
    targets.push({ seating, blockers });
  }
  targets.sort((a, b) => a.blockers.length - b.blockers.length);
  for (let budget = 1; budget <= MAX_MOVES; budget++) {
    for (const { seating, blockers } of targets.filter((t) => t.blockers.length <= budget)) {
      for (const o of blockers) o.at = null;
      newcomer.at = seating.tableIds;
      if (relocate(blockers, budget)) return { seating: seating.id, moves };
      newcomer.at = null;
      for (const o of blockers) o.at = o.origin;
    }
  }
  return null;
}

describe('findSeatingWithMoves on random floors', () => {
  it('answers the requests of one floor state in turn as it answers each alone', () => {
    const random = mulberry32(7);
    const floor = randomFloor(random, 40, 120);
    const optimiser = new TableOptimiser({
      seatings: floor.seatings,
      bookings: floor.bookings,
      areaOf: floor.areaOf,
      now: evening,
      serviceDate,
    });
    let withMoves = 0;
    for (let i = 0; i < 200; i++) {
      const request = randomRequest(random);
      const answer = optimiser.find(request);
      if (answer?.moves.length) withMoves++;
      expect(answer, `request ${i}`).toEqual(findSeatingWithMoves({ ...floor, ...request, now: evening, serviceDate }));
    }
    expect(withMoves).toBeGreaterThan(10);
  });

  it('is deterministic: the order of the bookings changes nothing', () => {
    let withMoves = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const random = mulberry32(seed);
      const floor = randomFloor(random, 12, 30);
      const request = { seatings: floor.seatings, areaOf: floor.areaOf, now: evening, ...randomRequest(random) };
      const expected = findSeatingWithMoves({ ...request, bookings: floor.bookings });
      if (expected?.moves.length) withMoves++;
      for (let round = 0; round < 5; round++) {
        expect(findSeatingWithMoves({ ...request, bookings: shuffled(random, floor.bookings) }), `seed ${seed}`).toEqual(expected);
      }
    }
    expect(withMoves).toBeGreaterThan(5);
  });

  it('never seats two parties at one table at once, moves only movable parties, and each to a seating that fits', () => {
    const outcomes = { free: 0, moved: 0, none: 0 };
    for (let seed = 1; seed <= 500; seed++) {
      const random = mulberry32(seed * 7919);
      const tableCount = 6 + Math.floor(random() * 10);
      const floor = randomFloor(random, tableCount, tableCount * 2 + Math.floor(random() * tableCount));
      const request = randomRequest(random);
      const now = evening;
      const result = findSeatingWithMoves({ seatings: floor.seatings, bookings: floor.bookings, areaOf: floor.areaOf, now, ...request });
      const usable = floor.seatings.filter((s) => !s.isBlocked && fitsParty(s, request.partySize));
      const firstFree = usable.find((s) => isFreeOn(floor.bookings, s.tableIds, request.start, request.end, now));
      const context = `seed ${seed * 7919}`;
      if (!result) {
        expect(firstFree, context).toBeUndefined();
        outcomes.none++;
        continue;
      }
      if (result.moves.length === 0) {
        expect(result.seating, context).toBe(firstFree);
        outcomes.free++;
        continue;
      }
      outcomes.moved++;
      expect(firstFree, context).toBeUndefined();
      expect(usable, context).toContain(result.seating);
      expect(result.moves.length, context).toBeLessThanOrEqual(MAX_MOVES);
      expect(new Set(result.moves.map((m) => m.reservationId)).size, context).toBe(result.moves.length);
      const byId = new Map(floor.bookings.map((b) => [b.id, b]));
      const after = new Map(floor.bookings.map((b) => [b.id, b]));
      for (const move of result.moves) {
        const moved = byId.get(move.reservationId)!;
        expect(isMovable(moved, now), context).toBe(true);
        expect(move.fromTableIds, context).toEqual(moved.tableIds);
        expect(move.toSeating.isBlocked || !fitsParty(move.toSeating, moved.partySize), context).toBe(false);
        after.set(moved.id, { ...moved, tableIds: move.toSeating.tableIds });
      }
      const newcomer: Booking = {
        id: 'new',
        serviceDate,
        time: '',
        partySize: request.partySize,
        status: 'confirmed',
        startsAt: request.start,
        endsAt: request.end,
        tableIds: result.seating.tableIds,
        tableLocked: false,
      };
      const placed = [...after.values(), newcomer];
      for (const b of placed) {
        const span = heldSpan(b, now);
        if (span)
          expect(
            isFreeOn(
              placed.filter((o) => o !== b),
              b.tableIds,
              span.start,
              span.end,
              now,
            ),
            `${context}: ${b.id}`,
          ).toBe(true);
      }
    }
    // The floors are busy enough for every branch to be exercised many times.
    expect(outcomes.free).toBeGreaterThan(20);
    expect(outcomes.moved).toBeGreaterThan(20);
    expect(outcomes.none).toBeGreaterThan(20);
  });

  it('gives the answer of a plain exhaustive search: its shortcuts only drop branches without answer', () => {
    let withMoves = 0;
    for (let seed = 1; seed <= 1300; seed++) {
      const random = mulberry32(seed * 104729);
      const tableCount = 4 + Math.floor(random() * 6);
      const floor = combinationFloor(random, tableCount, tableCount * 2 + Math.floor(random() * tableCount * 2));
      const request = randomRequest(random);
      const result = findSeatingWithMoves({ ...floor, ...request, now: evening });
      if (result?.moves.length) withMoves++;
      expect(outline(result), `seed ${seed * 104729}`).toEqual(searchExhaustively(floor, request, evening));
    }
    expect(withMoves).toBeGreaterThan(300);
  });

  it('answers a request needing moves on a 60-table floor with 150 reservations quickly', () => {
    const random = mulberry32(60150);
    const floor = randomFloor(random, 60, 150);
    let request: ReturnType<typeof randomRequest> | undefined;
    for (let i = 0; i < 500 && !request; i++) {
      const candidate = randomRequest(random);
      if (findSeatingWithMoves({ ...floor, ...candidate, now: evening })?.moves.length) request = candidate;
    }
    expect(request).toBeDefined();
    const durations: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      findSeatingWithMoves({ ...floor, ...request!, now: evening });
      durations.push(performance.now() - started);
    }
    durations.sort((a, b) => a - b);
    const p50 = durations[100];
    console.log(`findSeatingWithMoves, 60 tables, 150 reservations, a request needing moves: p50 ${p50.toFixed(3)} ms`);
    // Generous (the target is 2 ms): a loaded CI machine must not make this fail.
    expect(p50).toBeLessThan(20);
  });
});
