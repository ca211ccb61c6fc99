// The table optimiser alone (no I/O): a 60-table floor (2/4/6/8 tops, 15 combinations) with 150
// reservations holding tables on the day. Target: p50 < 2 ms for a request that needs moves. A dinner
// seated until full shows the worst case, a request refused after the whole bounded search.
// Usage: npx tsx bench/table-optimiser-engine.ts [samples=2000]
import { orderedSeatings } from '../src/lib/availability/seatings.js';
import { TableOptimiser, findSeatingWithMoves, type SeatingSearch } from '../src/lib/availability/table-optimiser.js';
import type { Booking, FloorTable, TableCombination } from '../src/lib/availability/types.js';
import { mulberry32 } from '../test/support/seeded-random.js';

const samples = Number(process.argv[2] ?? 2000);
const MINUTE_MS = 60_000;
const serviceDate = '2030-03-01';
const at = (minuteOfDay: number) => Date.parse(`${serviceDate}T00:00:00Z`) + minuteOfDay * MINUTE_MS;
const now = at(10 * 60);

const random = mulberry32(2030);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];

const tops = [
  ...Array(18).fill({ min: 1, max: 2 }),
  ...Array(24).fill({ min: 2, max: 4 }),
  ...Array(12).fill({ min: 3, max: 6 }),
  ...Array(6).fill({ min: 5, max: 8 }),
];
const tables: FloorTable[] = tops.map((top, i) => ({
  id: `t${i}`,
  name: `T${String(i).padStart(2, '0')}`,
  areaId: `a${i % 3}`,
  areaPosition: i % 3,
  minSeats: top.min,
  maxSeats: top.max,
  isBlocked: false,
}));
// Neighbouring two-tops and four-tops pushed together.
const combinations: TableCombination[] = [
  ...Array.from({ length: 6 }, (_, i) => ({ id: `c2-${i}`, tableIds: [`t${2 * i}`, `t${2 * i + 1}`] })),
  ...Array.from({ length: 9 }, (_, i) => ({ id: `c4-${i}`, tableIds: [`t${18 + 2 * i}`, `t${19 + 2 * i}`] })),
];
const seatings = orderedSeatings({ tables, combinations });
const areaById = new Map(tables.map((t) => [t.id, t.areaId]));
const base = { seatings, now, serviceDate, areaOf: (id: string) => areaById.get(id)! } satisfies Partial<SeatingSearch>;

type Request = Pick<SeatingSearch, 'partySize' | 'start' | 'end'>;
const lunch = Array.from({ length: 9 }, (_, i) => 12 * 60 + 15 * i);
const dinner = Array.from({ length: 15 }, (_, i) => 18 * 60 + 15 * i);

/** Reservations seated first-fit at the grid's times, as the engine seats them, until `count` or the floor is full. */
function seatReservations(grid: readonly number[], count: number): Booking[] {
  const bookings: Booking[] = [];
  for (let i = 0, misses = 0; bookings.length < count && misses < 200; i++) {
    const partySize = pick([2, 2, 2, 2, 3, 4, 4, 4, 5, 6, 6, 8]);
    const startsAt = at(pick(grid));
    const endsAt = startsAt + pick([90, 120, 120]) * MINUTE_MS;
    const found = findSeatingWithMoves({ ...base, bookings, partySize, start: startsAt, end: endsAt });
    if (!found || found.moves.length) {
      misses++;
      continue;
    }
    bookings.push({
      id: `r${i}`,
      serviceDate,
      time: '',
      partySize,
      status: 'confirmed',
      startsAt,
      endsAt,
      tableIds: found.seating.tableIds,
      tableLocked: random() < 0.1,
    });
  }
  return bookings;
}

function timings(search: SeatingSearch, runs: number): number[] {
  const durations: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    findSeatingWithMoves(search);
    durations.push(performance.now() - started);
  }
  return durations.sort((a, b) => a - b);
}

function runFloor(title: string, grid: readonly number[], bookings: Booking[]): void {
  const requests = grid.flatMap((minute) =>
    [2, 4, 6, 8].map((partySize): Request => ({ partySize, start: at(minute), end: at(minute) + 120 * MINUTE_MS })),
  );
  const searchOf = (r: Request): SeatingSearch => ({ ...base, bookings, ...r });
  const outcomes = new Map(requests.map((r) => [r, findSeatingWithMoves(searchOf(r))]));
  const withMoves = (k: number) => requests.filter((r) => outcomes.get(r)?.moves.length === k);
  const unanswered = requests.filter((r) => !outcomes.get(r));
  for (const r of requests) timings(searchOf(r), 20); // warm-up: JIT
  const slowest = (rs: Request[]) => rs.map((r) => ({ r, t: timings(searchOf(r), 21)[10] })).sort((a, b) => b.t - a.t)[0]?.r;

  const counts = [0, 1, 2, 3].map((k) => `${withMoves(k).length} with ${k} moves`).join(', ');
  console.log(`${title}: ${tables.length} tables, ${combinations.length} combinations, ${bookings.length} reservations`);
  console.log(`  grid requests: ${counts}, ${unanswered.length} without answer`);
  const measure = (label: string, request: Request | undefined) => {
    if (!request) return;
    const durations = timings(searchOf(request), samples);
    const quantile = (q: number) => durations[Math.min(durations.length - 1, Math.floor(q * durations.length))].toFixed(3);
    const time = new Date(request.start).toISOString().slice(11, 16);
    console.log(`  ${label.padEnd(42)} party of ${request.partySize} at ${time}: p50 ${quantile(0.5)} ms   p95 ${quantile(0.95)} ms`);
  };
  measure('needing 1 move (the first such request)', withMoves(1)[0]);
  measure('needing moves (the slowest such request)', slowest([1, 2, 3].flatMap(withMoves)));
  measure('needing no move', withMoves(0)[0]);
  measure('no answer within the bound (the slowest)', slowest(unanswered));
  // GET /availability/slots and the alternatives of a refusal ask every grid time on one floor state.
  const grids: number[] = [];
  for (let i = 0; i < Math.max(5, Math.ceil(samples / 100)); i++) {
    const started = performance.now();
    const optimiser = new TableOptimiser({ ...base, bookings });
    for (const r of requests) optimiser.find(r);
    grids.push(performance.now() - started);
  }
  grids.sort((a, b) => a - b);
  console.log(
    `  ${`every grid request (${requests.length}) on one optimiser`.padEnd(42)} p50 ${grids[grids.length >> 1].toFixed(3)} ms in all`,
  );
}

const day = seatReservations([...lunch, ...dinner], 150);
if (day.length < 150) throw new Error(`only ${day.length} reservations could be seated`);
runFloor('Lunch and dinner', [...lunch, ...dinner], day);
// The worst case for a refusal: a dinner seated until no party fits, where most branches go deep.
runFloor('Dinner seated until full', dinner, seatReservations(dinner, Number.POSITIVE_INFINITY));
console.log('target: p50 < 2 ms for a request needing moves');
