// POST /reservations across many venues (issue 4). Target: >= 500 bookings/s sustained, and not a
// single double booking nor a pacing block above its maxCovers afterwards (checked in SQL).
// Usage: npx tsx bench/reservations.ts [seconds=10] [venues=40] [--code DIR] [--phase S] (after a warm-up of as many seconds)
//   --code DIR serves another checkout beside this code (a worktree of an earlier commit, its
//   node_modules linked, this bench's files copied in when it lacks them), each on a database of its
//   own that its own code migrated and seeded (bench/support/seed-booking-venues.ts, run in DIR).
//   After each one's warm-up the two book in alternating phases of --phase seconds (2), each first in
//   every other phase, until each has booked `seconds`: a machine whose speed drifts from one minute
//   to the next then slows both alike, where separate runs of each code compared different minutes
//   (the same code alone, four runs in a row: 430–536 bookings/s, PostgreSQL's CPU per request moving
//   with the web's). Bookings/s and CPU per request of each summed over its phases, with this code's
//   bookings/s over the other's; then each one's contended phase and checks.
import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs } from './support/process-cpu.js';
import { seedBookingVenues, type BookingVenues } from './support/seed-booking-venues.js';
import { spawnServer } from './support/spawn-server.js';
import { median } from './support/statistics.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { code: { type: 'string' }, phase: { type: 'string' } } });
const seconds = Number(positionals[0] ?? 10);
const venueCount = Number(positionals[1] ?? 40);
const phaseSeconds = values.code ? Number(values.phase ?? 2) : seconds;
const phases = Math.max(1, Math.round(seconds / phaseSeconds));
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');

interface Side {
  label: string;
  /** The checkout whose server it runs. */
  dir: string;
  port: number;
  tenant: BookingVenues;
  /** A connection to the side's database: its backends' CPU, its checks. */
  sql: postgres.Sql;
  server?: ChildProcess;
}

const sides: Side[] = [];
if (values.code) {
  const dir = path.resolve(values.code);
  const seeded = execFileSync(
    process.execPath,
    ['--import', 'tsx', 'bench/support/seed-booking-venues.ts', 'floorline_bench_reservations_other', String(venueCount)],
    {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const tenant = JSON.parse(seeded.trim().split('\n').at(-1)!) as BookingVenues;
  sides.push({ label: values.code, dir, port: 3943, tenant, sql: postgres(tenant.databaseUrl, { max: 2, onnotice: () => {} }) });
}
{
  const tenant = await seedBookingVenues('floorline_bench_reservations', venueCount);
  sides.push({ label: 'this code', dir: path.resolve('.'), port: 3942, tenant, sql: (await import('../src/db/client.js')).pool() });
}
try {
  for (const side of sides) {
    const env = {
      DATABASE_URL: side.tenant.databaseUrl,
      QUEUE_PREFIX: side.tenant.queuePrefix,
      LOG_LEVEL: 'warn',
      ADMIN_PASSWORD: 'bench',
      // No metrics port: two servers would want the same one.
      METRICS_PORT: '0',
    };
    side.server = await spawnServer(path.join(side.dir, 'src/server.ts'), env, side.port);
  }
} catch (err) {
  for (const side of sides) side.server?.kill('SIGTERM');
  throw err;
}
const today = instantToLocal('Europe/Rome', Date.now()).date;
// The demo venue's grid: lunch 12:00–14:00 and dinner 19:00–22:00 every 15 minutes.
const times = [12, 13, 19, 20, 21].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)).concat(['14:00', '22:00']);
const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];

/** Bookings at 32 connections on `side`'s server, `body` choosing each request's venue, day and time. */
async function run(side: Side, duration: number, body: () => Record<string, unknown>) {
  const result = await autocannon({
    url: `http://127.0.0.1:${side.port}`,
    connections: 32,
    duration,
    headers: { authorization: `Bearer ${side.tenant.key}`, 'content-type': 'application/json' },
    requests: [{ method: 'POST', path: '/api/v1/reservations', setupRequest: (req) => ({ ...req, body: JSON.stringify(body()) }) }],
  });
  const statuses = result.statusCodeStats as unknown as Record<string, { count: number }>;
  const count = (code: string) => statuses[code]?.count ?? 0;
  const others = Object.entries(statuses).filter(([code]) => code !== '201' && code !== '409');
  return { result, created: count('201'), refused: count('409'), others: others.map(([c, s]) => `${c}×${s.count}`).join(', ') || 'none' };
}

/** A booking of any of `side`'s venues, on any of the next 30 days, at any time of its grid. */
const spreadBooking = (side: Side) => () => ({
  venueId: pick(side.tenant.venueIds),
  serviceDate: addDays(today, 1 + Math.floor(Math.random() * 30)),
  time: pick(times),
  partySize: 2 + Math.floor(Math.random() * 3),
});

/** What one side booked over its measured phases. */
interface Measured {
  created: number;
  refused: number;
  requests: number;
  errors: number;
  others: string[];
  web: number;
  postgres: number;
  perSecond: number[];
  /** Seconds the phases lasted (autocannon's own, each a little over --phase). */
  elapsed: number;
  p50: number[];
  p99: number[];
}

let failed = false;
try {
  // As long a warm-up, not counted: a cold server spends the first seconds compiling and preparing
  // each connection's statements (the web process's CPU per booking was a third higher without it).
  for (const side of sides) await run(side, seconds, spreadBooking(side));
  const measured = new Map<Side, Measured>(
    sides.map((side) => [
      side,
      { created: 0, refused: 0, requests: 0, errors: 0, others: [], web: 0, postgres: 0, perSecond: [], elapsed: 0, p50: [], p99: [] },
    ]),
  );
  for (let phase = 0; phase < phases; phase++) {
    for (const side of phase % 2 ? [...sides].reverse() : sides) {
      const m = measured.get(side)!;
      const cpuBefore = { web: processCpuMs(side.server!.pid!), postgres: await postgresCpuSnapshot(side.sql) };
      const spread = await run(side, phaseSeconds, spreadBooking(side));
      m.web += processCpuMs(side.server!.pid!) - cpuBefore.web;
      m.postgres += cpuUsedSince(cpuBefore.postgres, await postgresCpuSnapshot(side.sql));
      m.created += spread.created;
      m.refused += spread.refused;
      m.requests += spread.result.requests.total;
      m.errors += spread.result.errors;
      if (spread.others !== 'none') m.others.push(spread.others);
      m.perSecond.push(spread.result.requests.average);
      m.elapsed += spread.result.duration;
      m.p50.push(spread.result.latency.p50);
      m.p99.push(spread.result.latency.p99);
    }
  }
  const of = phases > 1 ? ` (${phases} phases of ${phaseSeconds} s: requests/s, p50 and p99 their medians)` : '';
  for (const side of sides) {
    const m = measured.get(side)!;
    const perRequest = (ms: number) => (ms / m.requests).toFixed(2);
    console.log(
      `${sides.length > 1 ? `${side.label}: ` : ''}POST /reservations, 32 connections, ${venueCount} venues over 30 days: ${median(m.perSecond).toFixed(0)} req/s, ${(m.created / m.elapsed).toFixed(0)} bookings/s   p50 ${median(m.p50)} ms   p99 ${median(m.p99)} ms   (target >= 500/s)${of}`,
    );
    console.log(`  201: ${m.created}   409 no_availability: ${m.refused}   other: ${m.others.join(', ') || 'none'}   errors: ${m.errors}`);
    // The web process's budget: no more CPU per booking than PostgreSQL spends on it.
    console.log(`  CPU per request: web ${perRequest(m.web)} ms, PostgreSQL ${perRequest(m.postgres)} ms`);
  }
  if (sides.length > 1) {
    const [earlier, ours] = sides.map((side) => measured.get(side)!.created / measured.get(side)!.elapsed);
    console.log(`bookings/s this code / ${sides[0].label}: ${(ours / earlier).toFixed(2)}`);
  }
  for (const side of sides) if (!(await checkSide(side, measured.get(side)!.created))) failed = true;
} finally {
  for (const side of sides) side.server?.kill('SIGTERM');
  for (const side of sides) await side.sql.end();
}
if (failed) process.exitCode = 1;

/** Everyone on one venue and day of `side`, then its database checked; false when a check failed. */
async function checkSide(side: Side, spreadCreated: number): Promise<boolean> {
  const sql = side.sql;
  // Tables and pacing blocks fill up, most requests lose.
  const hotDay = addDays(today, 45);
  const hot = await run(side, 3, () => ({
    venueId: side.tenant.venueIds[0],
    serviceDate: hotDay,
    time: pick(times.slice(10, 18)),
    partySize: 2 + Math.floor(Math.random() * 3),
  }));
  const label = sides.length > 1 ? `${side.label}: ` : '';
  console.log(
    `${label}contended (one venue, one day, 3 s): 201: ${hot.created}   409: ${hot.refused}   other: ${hot.others}   errors: ${hot.result.errors}`,
  );
  const answered201 = spreadCreated + hot.created;
  const [{ doubles }] = await sql`
    select count(*)::int as doubles from reservation_tables a
    join reservation_tables b on a.table_id = b.table_id and a.reservation_id < b.reservation_id
    where a.live and b.live and a.during && b.during`;
  // Demo pacing: 40 covers per 30-minute block of dinner (19:00).
  const [{ overfull }] = await sql`
    select count(*)::int as overfull from (
      select venue_id, service_date, (extract(hour from time::time) * 60 + extract(minute from time::time) - 1140)::int / 30 as block, sum(party_size) as covers
      from reservations where time >= '19:00' and status not in ('cancelled', 'no_show')
      group by 1, 2, 3) blocks
    where covers > 40`;
  const [{ stored, created }] = await sql`
    select (select count(*)::int from reservations) as stored, (select count(*)::int from events where type = 'reservation_created') as created`;
  console.log(
    `  double bookings: ${doubles}   pacing blocks above maxCovers: ${overfull}   reservations stored: ${stored} (201s: ${answered201}), reservation_created events: ${created}`,
  );
  // Requests still in flight when the run stops may complete after autocannon stopped counting them.
  return !(doubles || overfull || stored < answered201 || created !== stored);
}
