// Table optimisation on simulated nights (issue 21): two realistic floors (a 60-table restaurant
// with 2/4/6/8-tops and combinations, a 20-table bistro), booking requests arriving in random
// order with a realistic party-size mix, demand from 60 % to 130 % of a night's capacity, each night
// booked twice through the same service functions as POST /reservations: on a venue with
// tableOptimisation off and on an identical venue with it on. Prints, per floor and demand level,
// covers seated, refused requests, moves per booking and GET /availability latency (the same
// service function) for both, then the invariant check (double bookings, pacing overruns) of every
// venue. Deterministic: the same seed books the same nights with the same outcome (a digest of
// every outcome is printed; night 1 is booked a second time and must give the same outcomes).
// Usage: npx tsx bench/table-optimisation.ts [--nights-per-level 7] [--seed 2030]
import { parseArgs } from 'node:util';
import { mulberry32 } from './support/seeded-random.js';
import { prepareBenchDatabase } from './support/bench-database.js';

const { values } = parseArgs({ options: { 'nights-per-level': { type: 'string' }, seed: { type: 'string' } } });
const nightsPerLevel = Number(values['nights-per-level'] ?? 7);
const seed = Number(values.seed ?? 2030);
const demandLevels = [0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3];

await prepareBenchDatabase('floorline_bench_table_optimisation');
const { createApiKey, createOrganisation, findAuthContext } = await import('../src/services/keys/key-service.js');
const { hashKey } = await import('../src/lib/api-key-format.js');
const { createVenue, updateVenue } = await import('../src/services/venues/venue-service.js');
const { createRule } = await import('../src/services/venue-config/venue-rules.js');
const { shiftKind } = await import('../src/services/venue-config/shift-rules.js');
const { turnTimeRuleKind } = await import('../src/services/venue-config/turn-time-rules.js');
const { pacingRuleKind } = await import('../src/services/venue-config/pacing-rules.js');
const { createFloorPlan } = await import('../src/services/floor/floor-plan-writes.js');
const { systemActor } = await import('../src/services/events/outbox.js');
const { createReservation } = await import('../src/services/reservations/create-reservation.js');
const { checkAvailability } = await import('../src/services/availability/availability-service.js');
const { checkInvariants } = await import('../src/services/invariants/check-invariants.js');
const { ApiError } = await import('../src/core/errors.js');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const { sql } = await import('../src/db/client.js');
const { closeQueues } = await import('../src/queues/queues.js');
const { getAllQueues } = await import('../src/jobs/all-jobs.js');
type AuthContext = import('../src/core/auth-context.js').AuthContext;

interface FloorSpec {
  name: string;
  /** [count, minSeats, maxSeats] per kind of table. */
  tops: [number, number, number][];
  areas: string[];
  /** Neighbouring tables pushed together, by index in the table list. */
  combinations: [number, number][];
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
  combinations: [...Array.from({ length: 6 }, (_, i): [number, number] => [2 * i, 2 * i + 1]), ...Array.from({ length: 6 }, (_, i): [number, number] => [18 + 2 * i, 19 + 2 * i])],
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

// Dinner 18:00–23:30, last seating 21:30, every 15 minutes; turn times by party size.
const grid = Array.from({ length: 15 }, (_, i) => `${String(18 + Math.floor(i / 4)).padStart(2, '0')}:${String((i % 4) * 15).padStart(2, '0')}`);
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
const turnMinutes = (partySize: number) => (partySize <= 2 ? 90 : partySize <= 4 ? 105 : 120);

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
  for (let covers = 0; covers < target; ) {
    const partySize = weighted(random, partyMix);
    requests.push({ time: weighted(random, grid.map((t, i): [string, number] => [t, timeWeights[i]])), partySize });
    covers += partySize;
  }
  return requests;
}

async function createSimulatedVenue(auth: AuthContext, floor: FloorSpec, optimisation: 'off' | 'on'): Promise<string> {
  const { organisationId } = auth;
  const venue = await createVenue(organisationId, { name: `${floor.name} ${optimisation}`, timezone: 'Europe/Rome', countryCode: 'IT', bookingHorizonDays: 730 });
  const access = { organisationId, venueIds: null };
  const dinner = await createRule(shiftKind, access, venue.id, {
    name: 'Dinner',
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    startTime: '18:00',
    lastSeatingTime: '21:30',
    endTime: '23:30',
    validFrom: null,
    validTo: null,
    isActive: true,
  });
  for (const [min, max] of [
    [1, 2],
    [3, 4],
    [5, 8],
  ]) {
    await createRule(turnTimeRuleKind, access, venue.id, { shiftId: null, minPartySize: min, maxPartySize: max, durationMinutes: turnMinutes(max) });
  }
  await createRule(pacingRuleKind, access, venue.id, { shiftId: dinner.id, isEnabled: true, maxCovers: floor.pacingCovers, windowMinutes: 30 });
  const areas = floor.areas.map((name, position) => ({ id: crypto.randomUUID(), name, position, widthCm: 1200, heightCm: 900 }));
  const tables = floor.tops
    .flatMap(([count, minSeats, maxSeats]) => Array.from({ length: count }, () => ({ minSeats, maxSeats })))
    .map((t, i, all) => ({ id: crypto.randomUUID(), areaId: areas[Math.floor((i * areas.length) / all.length)].id, name: `T${String(i + 1).padStart(2, '0')}`, ...t }));
  const combinations = floor.combinations.map(([a, b]) => ({ tableIds: [tables[a].id, tables[b].id] }));
  await createFloorPlan(access, systemActor('bench'), venue.id, { name: floor.name, areas, tables, combinations });
  await updateVenue(auth, venue.id, { tableOptimisation: optimisation });
  return venue.id;
}

interface NightResult {
  requests: number;
  booked: number;
  covers: number;
  refused: number;
  /** GET /availability durations (ms) for a sample of the night's requests, asked just before booking them. */
  availabilityMs: number[];
  /** Outcome per request: the table names, or the refusal reason. */
  outcomes: string[];
}

async function bookNight(auth: AuthContext, venueId: string, serviceDate: string, requests: readonly Request[]): Promise<NightResult> {
  const result: NightResult = { requests: requests.length, booked: 0, covers: 0, refused: 0, availabilityMs: [], outcomes: [] };
  for (const [i, r] of requests.entries()) {
    if (i % 4 === 0) {
      const started = performance.now();
      await checkAvailability(auth, { venueId, serviceDate, ...r });
      result.availabilityMs.push(performance.now() - started);
    }
    try {
      const { tables } = await createReservation(auth, { venueId, serviceDate, ...r });
      result.booked++;
      result.covers += r.partySize;
      result.outcomes.push(tables.map((t) => t.name).join('+'));
    } catch (err) {
      if (!(err instanceof ApiError) || err.code !== 'no_availability') throw err;
      result.refused++;
      result.outcomes.push(String((err.details as { reason: string }).reason));
    }
  }
  return result;
}

async function movesOn(venueId: string): Promise<Map<string, number>> {
  const rows = await sql<{ service_date: string; moves: number }[]>`
    select r.service_date::text, count(*)::int as moves from events e join reservations r on r.id = e.subject_id
    where e.venue_id = ${venueId} and e.actor->>'name' = 'table-optimiser' group by r.service_date`;
  return new Map(rows.map((r) => [r.service_date, r.moves]));
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

const organisation = await createOrganisation('Simulation', false);
const { key } = await createApiKey({ organisationId: organisation.id, kind: 'live', name: 'simulation', rateLimitPerMinute: 100_000_000 });
const auth = (await findAuthContext(hashKey(key)))!;
const firstNight = addDays(instantToLocal('Europe/Rome', Date.now()).date, 2);
const allVenues: string[] = [];
let determinismOk = true;

for (const floor of [restaurant, bistro]) {
  const venues = { off: await createSimulatedVenue(auth, floor, 'off'), on: await createSimulatedVenue(auth, floor, 'on') };
  allVenues.push(venues.off, venues.on);
  const random = mulberry32(seed + (floor === restaurant ? 0 : 1));
  const rows: string[] = [];
  let night = 0;
  const firstRequests: Request[][] = [];
  const firstOutcomes: string[][] = [];
  const started = performance.now();
  for (const demand of demandLevels) {
    const totals = { off: [] as NightResult[], on: [] as NightResult[] };
    const dates: string[] = [];
    for (let n = 0; n < nightsPerLevel; n++, night++) {
      const serviceDate = addDays(firstNight, night);
      dates.push(serviceDate);
      const requests = nightRequests(floor, demand, random);
      for (const setting of ['off', 'on'] as const) {
        const result = await bookNight(auth, venues[setting], serviceDate, requests);
        totals[setting].push(result);
        addToDigest(result.outcomes.join(','));
        if (night === 0 && setting === 'on') {
          firstRequests.push(requests);
          firstOutcomes.push(result.outcomes);
        }
      }
    }
    const moves = await movesOn(venues.on);
    const movesOfLevel = sum(dates.map((d) => moves.get(d) ?? 0));
    const covers = (s: 'off' | 'on') => sum(totals[s].map((r) => r.covers));
    const refused = (s: 'off' | 'on') => sum(totals[s].map((r) => r.refused));
    const noTable = (s: 'off' | 'on') => sum(totals[s].map((r) => r.outcomes.filter((o) => o === 'no_table').length));
    const requested = sum(totals.on.map((r) => r.requests));
    const p50 = (s: 'off' | 'on') => quantile(totals[s].flatMap((r) => r.availabilityMs), 0.5).toFixed(2);
    const gain = ((covers('on') / covers('off') - 1) * 100).toFixed(1);
    rows.push(
      `| ${Math.round(demand * 100)} % | ${requested} | ${covers('off')} / ${covers('on')} | **${gain} %** | ${refused('off')} / ${refused('on')} (${noTable('off')} / ${noTable('on')}) | ${(movesOfLevel / sum(totals.on.map((r) => r.booked))).toFixed(3)} | ${p50('off')} / ${p50('on')} ms |`,
    );
  }
  // The first night booked again, on a day of its own: the same requests must give the same outcomes.
  const again = await bookNight(auth, venues.on, addDays(firstNight, night + 1), firstRequests[0]);
  const same = again.outcomes.join(',') === firstOutcomes[0].join(',');
  determinismOk &&= same;
  console.log(`\n${floor.name}: ${night} nights (${nightsPerLevel} per demand level), capacity ${capacityOf(floor)} covers a night, seed ${seed}, ${((performance.now() - started) / 1000).toFixed(0)} s`);
  console.log('| demand | requests | covers seated off / on | gain | refused off / on (of which no_table) | moves per booking (on) | GET /availability p50 off / on |');
  console.log('|---|---|---|---|---|---|---|');
  for (const row of rows) console.log(row);
  console.log(`night 1 booked again with optimisation on: ${same ? 'same outcomes' : 'DIFFERENT outcomes'}`);
}

const counts = await checkInvariants({ venueIds: allVenues });
console.log(`\ninvariant check of every venue: ${JSON.stringify(counts)}`);
console.log(`outcome digest (same seed, same digest): ${digest.toString(16)}`);
for (const queue of getAllQueues()) await queue.obliterate({ force: true }).catch(() => {});
await closeQueues();
await sql.end();
if (!determinismOk || counts.overlappingTableOccupants || counts.pacingBlocksOverMaxCovers) process.exitCode = 1;
