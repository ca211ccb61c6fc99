// Table optimisation on simulated nights (issues 21 and 38): three floors (a 60-table restaurant with
// 2/4/6/8-tops and combinations, a 20-table bistro, and a room of mostly two-tops that combine into
// larger tables), booking requests arriving in random order with a realistic party-size mix, demand
// from 60 % to 130 % of a night's capacity. Each night is booked three times, side by side, by the
// engine the booking service runs (VenueDay.evaluate, its moves applied as the service applies them),
// in memory: optimisation off (the plan's order, no moves), moves only (the plan's order, parties
// moved when no table is free), and moves with the engine's choice (docs/reservations.md "Which
// table": packing, then the venue's demand curve). The demand curve of a night is learned, as the
// loader learns it, from the reservations the same policy booked on the floor's earlier simulated
// nights (the last 28; the first night has the default curve): never from the requests still to come.
// Prints per floor and demand level the covers seated, refusals by reason, moves per booking
// and the engine's time per request (p50, and p95 of the requests that needed the optimiser's
// search). Deterministic: the same seed books the same nights with the same outcome (a digest is
// printed; night 1 is booked a second time and must give the same outcomes). No database: the SQL
// side of a booking is measured by bench/availability.ts and bench/reservations.ts.
// Usage: npx tsx bench/table-optimisation.ts [--nights-per-level 7] [--seed 2030]
import { parseArgs } from 'node:util';
import { VenueDay, type DayContext } from '../src/lib/availability/venue-day.js';
import type { Booking, FloorTable, TableCombination, VenueConfig } from '../src/lib/availability/types.js';
import { DEMAND_HISTORY_DAYS, learnDemandCurve, type DemandCurve, type DemandHistoryRow } from '../src/lib/availability/demand-curve.js';
import { mulberry32 } from '../test/support/seeded-random.js';

const { values } = parseArgs({ options: { 'nights-per-level': { type: 'string' }, seed: { type: 'string' } } });
const nightsPerLevel = Number(values['nights-per-level'] ?? 7);
const seed = Number(values.seed ?? 2030);
const demandLevels = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3];

interface FloorSpec {
  name: string;
  /** [count, minSeats, maxSeats] per kind of table. */
  tops: [number, number, number][];
  areas: string[];
  /** Neighbouring tables pushed together, by index in the table list. */
  combinations: number[][];
  /** Covers per 30 minutes at dinner: the kitchen's pace. */
  pacingCovers: number;
}

const restaurant: FloorSpec = {
  name: 'restaurant (60 tables)',
  tops: [
    [18, 1, 2],
    [24, 2, 4],
    [12, 4, 6],
    [6, 5, 8],
  ],
  areas: ['Room', 'Terrace', 'Bar'],
  // Pairs of two-tops and of four-tops.
  combinations: [
    ...Array.from({ length: 6 }, (_, i) => [2 * i, 2 * i + 1]),
    ...Array.from({ length: 6 }, (_, i) => [18 + 2 * i, 19 + 2 * i]),
  ],
  pacingCovers: 90,
};
const bistro: FloorSpec = {
  name: 'bistro (20 tables)',
  tops: [
    [8, 1, 2],
    [8, 2, 4],
    [3, 4, 6],
    [1, 5, 8],
  ],
  areas: ['Room', 'Window'],
  combinations: [
    [0, 1],
    [2, 3],
    [8, 9],
  ],
  pacingCovers: 30,
};
/** Two rows of banquette two-tops: any two neighbours make a four, three a six, four an eight; a few four-tops by the window. */
const banquette: FloorSpec = {
  name: 'banquette (28 tables, mostly combining two-tops)',
  tops: [
    [24, 1, 2],
    [4, 2, 4],
  ],
  areas: ['Banquette', 'Window'],
  combinations: [0, 12].flatMap((row) => [
    ...Array.from({ length: 11 }, (_, i) => [row + i, row + i + 1]),
    ...Array.from({ length: 10 }, (_, i) => [row + i, row + i + 1, row + i + 2]),
    ...Array.from({ length: 3 }, (_, i) => [row + 4 * i, row + 4 * i + 1, row + 4 * i + 2, row + 4 * i + 3]),
  ]),
  pacingCovers: 40,
};

// Dinner 18:00–23:30, last seating 21:30, every 15 minutes; turn times by party size.
const grid = Array.from(
  { length: 15 },
  (_, i) => `${String(18 + Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}`,
);
// Guests prefer 19:30–20:30: weights per grid time.
const timeWeights = [1, 1, 2, 2, 3, 4, 5, 5, 5, 4, 3, 2, 2, 1, 1];
// Party sizes as restaurants see them: couples first, then fours.
const partyMix: [number, number][] = [
  [1, 2],
  [2, 45],
  [3, 10],
  [4, 24],
  [5, 5],
  [6, 8],
  [7, 2],
  [8, 4],
];

function weighted<T>(random: () => number, items: readonly [T, number][]): T {
  const total = items.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [item, w] of items) if ((r -= w) < 0) return item;
  return items.at(-1)![0];
}

/** A night's capacity in covers: every seat turned twice over the evening. */
const capacityOf = (floor: FloorSpec) => floor.tops.reduce((sum, [count, , max]) => sum + count * max, 0) * 2;

interface Request {
  time: string;
  partySize: number;
}

/** The requests of one night, in arrival order, until their covers reach `demand` × capacity. */
function nightRequests(floor: FloorSpec, demand: number, random: () => number): Request[] {
  const requests: Request[] = [];
  const target = demand * capacityOf(floor);
  for (let covers = 0; covers < target;) {
    const partySize = weighted(random, partyMix);
    requests.push({
      time: weighted(
        random,
        grid.map((t, i): [string, number] => [t, timeWeights[i]]),
      ),
      partySize,
    });
    covers += partySize;
  }
  return requests;
}

function configOf(floor: FloorSpec, optimisation: boolean): VenueConfig {
  const tables: FloorTable[] = floor.tops
    .flatMap(([count, minSeats, maxSeats]) => Array.from({ length: count }, () => ({ minSeats, maxSeats })))
    .map((t, i, all) => {
      const area = Math.floor((i * floor.areas.length) / all.length);
      return {
        id: `t${i}`,
        name: `T${String(i + 1).padStart(2, '0')}`,
        areaId: floor.areas[area],
        areaPosition: area,
        isBlocked: false,
        ...t,
      };
    });
  const combinations: TableCombination[] = floor.combinations.map((ids, i) => ({ id: `c${i}`, tableIds: ids.map((t) => tables[t].id) }));
  return {
    venue: {
      timezone: 'Europe/Rome',
      slotIntervalMinutes: 15,
      bookingHorizonDays: 730,
      minNoticeMinutes: 0,
      tableOptimisation: optimisation,
    },
    shifts: [
      {
        id: 'dinner',
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        startTime: '18:00',
        lastSeatingTime: '21:30',
        endTime: '23:30',
        validFrom: null,
        validTo: null,
        isActive: true,
      },
    ],
    closures: [],
    turnTimeRules: [
      { id: 'r2', shiftId: null, minPartySize: 1, maxPartySize: 2, durationMinutes: 90 },
      { id: 'r4', shiftId: null, minPartySize: 3, maxPartySize: 4, durationMinutes: 105 },
      { id: 'r8', shiftId: null, minPartySize: 5, maxPartySize: 8, durationMinutes: 120 },
    ],
    pacingRules: [{ id: 'p', shiftId: 'dinner', isEnabled: true, maxCovers: floor.pacingCovers, windowMinutes: 30 }],
    tables,
    combinations,
  };
}

interface Policy {
  name: string;
  optimisation: boolean;
  tableChoice: NonNullable<DayContext['tableChoice']>;
}

const policies: Policy[] = [
  { name: 'off', optimisation: false, tableChoice: 'plan-order' },
  { name: 'moves', optimisation: true, tableChoice: 'plan-order' },
  { name: 'moves+choice', optimisation: true, tableChoice: 'packing' },
];

interface NightResult {
  requests: number;
  booked: number;
  covers: number;
  moves: number;
  refusals: Map<string, number>;
  /** Engine time per request (ms), and of the requests it answered by the optimiser's search (moves or a refusal after it). */
  engineMs: number[];
  searchMs: number[];
  /** Outcome per request: the table names, or the refusal reason. */
  outcomes: string[];
  doubleBookings: number;
  /** The night as the venue's history sees it: reservations by party size and time. */
  history: DemandHistoryRow[];
}

/** A night booked request by request as the booking service does it: evaluate, apply the moves, take the first seating. */
function bookNight(
  config: VenueConfig,
  policy: Policy,
  serviceDate: string,
  now: number,
  requests: readonly Request[],
  demand: DemandCurve | undefined,
): NightResult {
  const result: NightResult = {
    requests: requests.length,
    booked: 0,
    covers: 0,
    moves: 0,
    refusals: new Map(),
    engineMs: [],
    searchMs: [],
    outcomes: [],
    doubleBookings: 0,
    history: [],
  };
  const bookings: Booking[] = [];
  const byId = new Map<string, Booking>();
  const nameOf = new Map(config.tables.map((t) => [t.id, t.name]));
  for (const [i, r] of requests.entries()) {
    const started = performance.now();
    const day = new VenueDay(config, serviceDate, bookings, now, { tableChoice: policy.tableChoice, demand });
    const e = day.evaluate(r.time, r.partySize, { allSeatings: true });
    const ms = performance.now() - started;
    result.engineMs.push(ms);
    if ((e.available && e.moves.length) || (!e.available && e.reason === 'no_table' && config.venue.tableOptimisation))
      result.searchMs.push(ms);
    if (!e.available) {
      result.refusals.set(e.reason, (result.refusals.get(e.reason) ?? 0) + 1);
      result.outcomes.push(e.reason);
      continue;
    }
    for (const move of e.moves) {
      const moved = byId.get(move.reservationId)!;
      moved.tableIds = move.toSeating.tableIds;
    }
    const seating = e.seatings[0];
    const booking: Booking = {
      id: `r${i}`,
      serviceDate,
      time: r.time,
      partySize: r.partySize,
      status: 'created',
      startsAt: e.timing.startsAt,
      endsAt: e.timing.endsAt,
      tableIds: seating.tableIds,
      tableLocked: false,
    };
    bookings.push(booking);
    byId.set(booking.id, booking);
    result.booked++;
    result.covers += r.partySize;
    result.moves += e.moves.length;
    result.outcomes.push(seating.tableIds.map((t) => nameOf.get(t)).join('+'));
  }
  result.doubleBookings = doubleBookingsOf(bookings);
  const counts = new Map<string, DemandHistoryRow>();
  for (const b of bookings) {
    const key = `${b.partySize} ${b.time}`;
    const row = counts.get(key) ?? { partySize: b.partySize, time: b.time, count: 0 };
    row.count++;
    counts.set(key, row);
  }
  result.history = [...counts.values()];
  return result;
}

/** Parties sharing a table at once after the night's bookings and moves: the engine's invariant, 0 or the engine is wrong. */
function doubleBookingsOf(bookings: readonly Booking[]): number {
  let doubles = 0;
  for (const [i, a] of bookings.entries()) {
    for (const b of bookings.slice(i + 1)) {
      if (a.startsAt < b.endsAt && b.startsAt < a.endsAt && a.tableIds.some((t) => b.tableIds.includes(t))) doubles++;
    }
  }
  return doubles;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
};
const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

let digest = 0;
const addToDigest = (text: string) => {
  for (let i = 0; i < text.length; i++) digest = (Math.imul(digest, 31) + text.charCodeAt(i)) >>> 0;
};

const firstNight = '2030-03-04';
const now = Date.parse('2030-03-01T12:00:00Z');
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
let determinismOk = true;
let doubleBookings = 0;

for (const [f, floor] of [restaurant, bistro, banquette].entries()) {
  const configs = { off: configOf(floor, false), on: configOf(floor, true) };
  const random = mulberry32(seed + f);
  const rows: string[] = [];
  let night = 0;
  let firstRequests: Request[] = [];
  let firstOutcomes = '';
  let firstDemand: DemandCurve | undefined;
  /** Per policy, the reservations of each earlier night: the venue's own history. */
  const histories = new Map<Policy, DemandHistoryRow[][]>(policies.map((p) => [p, []]));
  const demandOf = (policy: Policy) => {
    const nights = histories.get(policy)!.slice(-DEMAND_HISTORY_DAYS);
    return learnDemandCurve(nights.flat(), nights.length);
  };
  const started = performance.now();
  for (const demand of demandLevels) {
    const totals = new Map<Policy, NightResult[]>(policies.map((p) => [p, []]));
    for (let n = 0; n < nightsPerLevel; n++, night++) {
      const serviceDate = addDays(firstNight, night);
      const requests = nightRequests(floor, demand, random);
      for (const policy of policies) {
        const demand = demandOf(policy);
        const result = bookNight(policy.optimisation ? configs.on : configs.off, policy, serviceDate, now, requests, demand);
        histories.get(policy)!.push(result.history);
        totals.get(policy)!.push(result);
        doubleBookings += result.doubleBookings;
        addToDigest(result.outcomes.join(','));
        if (night === 0 && policy === policies[2]) {
          firstRequests = requests;
          firstOutcomes = result.outcomes.join(',');
          firstDemand = demand;
        }
      }
    }
    const of = (p: Policy) => totals.get(p)!;
    const covers = (p: Policy) => sum(of(p).map((r) => r.covers));
    const gain = (p: Policy) =>
      `${covers(p) >= covers(policies[0]) ? '+' : ''}${((covers(p) / covers(policies[0]) - 1) * 100).toFixed(1)} %`;
    const refused = (p: Policy, reason: string) => sum(of(p).map((r) => r.refusals.get(reason) ?? 0));
    const movesPerBooking = (p: Policy) => (sum(of(p).map((r) => r.moves)) / sum(of(p).map((r) => r.booked))).toFixed(3);
    const ms = (p: Policy, pick: (r: NightResult) => number[], q: number) => quantile(of(p).flatMap(pick), q).toFixed(2);
    const [off, moves, choice] = policies;
    rows.push(
      `| ${Math.round(demand * 100)} % | ${sum(of(off).map((r) => r.requests))} | ${covers(off)} / ${covers(moves)} / ${covers(choice)} | ${gain(moves)} / **${gain(choice)}** | ` +
        `${policies.map((p) => refused(p, 'no_table')).join(' / ')} | ${policies.map((p) => refused(p, 'pacing_full')).join(' / ')} | ${movesPerBooking(moves)} / ${movesPerBooking(choice)} | ` +
        `${policies.map((p) => ms(p, (r) => r.engineMs, 0.5)).join(' / ')} ms | ${ms(moves, (r) => r.searchMs, 0.95)} / ${ms(choice, (r) => r.searchMs, 0.95)} ms |`,
    );
  }
  // The first night booked again: the same requests must give the same outcomes.
  const again = bookNight(configs.on, policies[2], firstNight, now, firstRequests, firstDemand);
  const same = again.outcomes.join(',') === firstOutcomes;
  determinismOk &&= same;
  console.log(
    `\n${floor.name}: ${night} nights (${nightsPerLevel} per demand level), capacity ${capacityOf(floor)} covers a night, seed ${seed}, ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  console.log(
    '| demand | requests | covers off / moves / moves+choice | gain over off: moves / moves+choice | no_table off / moves / choice | pacing_full off / moves / choice | moves per booking: moves / choice | engine p50 per request off / moves / choice | optimiser p95 moves / choice |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`night 1 booked again with moves+choice: ${same ? 'same outcomes' : 'DIFFERENT outcomes'}`);
}

console.log(`\ndouble bookings over every night and policy: ${doubleBookings}`);
console.log(`outcome digest (same seed, same digest): ${digest.toString(16)}`);
if (!determinismOk || doubleBookings) process.exitCode = 1;
