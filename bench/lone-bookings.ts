// A booking's latency at one connection once the server is warm: bookings one after another
// (POST /reservations, each answered before the next is sent) on a 60-table venue, spread over the
// next 88 days (the default horizon is 90) and twelve times of the day, with the CPU per booking of
// the web process and of PostgreSQL. First `bookings` bookings of warm-up per server, not counted
// (at one connection a server runs a booking's code only a few hundred times a second: V8 optimises
// it after thousands, and bench/availability.ts's 40 bookings after 25 are measured mostly before
// that); then `rounds` rounds of `bookings` each.
// With --code DIR another checkout (a worktree of an earlier commit, its node_modules linked) is
// served against the same database, each server booking a venue of its own in the same sequence.
// Within a round the two book in turns of --turn bookings (50 by default), the first of each turn
// alternating: a machine whose speed drifts from one minute to the next (a shared host's) slows both
// alike. The same code against itself: 0.95–1.04 per round in turns of 50, 0.83–1.16 in whole rounds
// (--turn 1000, as this bench first measured). Compare the medians of one run.
// With --all-roles each server is `npm start`'s process (src/main.ts: every role in one process, each
// code with its own Redis prefix, so that each one's workers process its own bookings' events): its
// CPU is then the web's and the workers' together.
// With --built each code is served from its compiled build (dist/, made first when stale), by Node
// alone, as `npm start` serves it; otherwise both run their sources through tsx.
// Target: none of its own (the p50 of this code against an earlier one is the figure).
// Usage: npx tsx bench/lone-bookings.ts [bookings=1000] [rounds=3] [--code DIR] [--all-roles] [--built] [--turn N]
import { execFileSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchServerEnv, createBenchTenant, dropRedisKeys, prepareBenchDatabase, type BenchTenant } from './support/bench-database.js';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs } from './support/process-cpu.js';
import { spawnServer } from './support/spawn-server.js';
import { median, percentile } from './support/statistics.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { code: { type: 'string' }, 'all-roles': { type: 'boolean' }, built: { type: 'boolean' }, turn: { type: 'string' } },
});
const allRoles = values['all-roles'] === true;
const built = values.built === true;
const turn = Number(values.turn ?? 50);
const bookings = Number(positionals[0] ?? 1000);
const rounds = Number(positionals[1] ?? 3);
await prepareBenchDatabase('floorline_bench_lone_bookings');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();
const { analyzeChangedTables } = await import('../src/services/timers/analyze-tables.js');

const codes = [
  ...(values.code ? [{ label: values.code, dir: path.resolve(values.code), port: 3948 }] : []),
  { label: 'this code', dir: path.resolve('.'), port: 3949 },
];
const servers: ChildProcess[] = [];
try {
  for (const [i, code] of codes.entries()) {
    const env = benchServerEnv();
    if (allRoles) {
      env.QUEUE_PREFIX = `{floorline_bench_lone_bookings_${i}}`;
      await dropRedisKeys(env.QUEUE_PREFIX);
    }
    const script = allRoles ? 'main' : 'server';
    if (built) execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { cwd: code.dir, stdio: 'inherit' });
    servers.push(await spawnServer(path.join(code.dir, built ? `dist/src/${script}.js` : `src/${script}.ts`), env, code.port));
  }
} catch (err) {
  for (const server of servers) server.kill('SIGTERM');
  throw err;
}
const sides = await Promise.all(
  codes.map(async (code, i) => ({ ...code, server: servers[i], tenant: await createBenchTenant({ tableCount: 60 }), booked: 0 })),
);
const firstDay = addDays(instantToLocal('Europe/Rome', Date.now()).date, 1);
const days = 88;
const times = ['12:00', '12:30', '13:00', '13:30', '14:00', '19:00', '19:30', '20:00', '20:30', '21:00', '21:30', '22:00'];

/** The n-th booking of a venue: the days in turn, a time of the grid per pass over them. */
function bookingBody({ venueId }: BenchTenant, n: number) {
  return { venueId, serviceDate: addDays(firstDay, n % days), time: times[Math.floor(n / days) % times.length], partySize: 2 + (n % 3) };
}

/** `count` bookings one after another; each one's milliseconds from request to the end of its answer. */
async function bookInTurn(side: (typeof sides)[number], count: number): Promise<number[]> {
  const durations: number[] = [];
  const headers = { authorization: `Bearer ${side.tenant.key}`, 'content-type': 'application/json' };
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify(bookingBody(side.tenant, side.booked++));
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${side.port}/api/v1/reservations`, { method: 'POST', headers, body });
    const text = await res.text();
    durations.push(performance.now() - started);
    if (res.status !== 201) throw new Error(`${side.label}: booking ${res.status} ${text}`);
  }
  return durations;
}

const processLabel = allRoles ? 'the process (every role)' : 'web';
const results = new Map(sides.map((s) => [s.label, [] as Array<{ p50: number; p90: number; web: number; postgres: number }>]));

try {
  // The warm-up in turns of one booking, so that the servers' connections prepare their statements
  // with as many reservations in the tables.
  for (let i = 0; i < bookings; i++) for (const side of sides) await bookInTurn(side, 1);
  for (let round = 1; round <= rounds; round++) {
    // The grown tables analysed before each round, as worker-timers does every minute on a server
    // without autovacuum (this machine's), so that each server's prepared statements are replanned
    // for them: without it a server kept plans made on nearly empty tables, its venue day's read cost
    // twice the other's, and two servers of one tree differed by a fifth.
    await analyzeChangedTables(sql);
    const measured = new Map(sides.map((side) => [side, { durations: [] as number[], web: 0, postgres: 0 }]));
    for (let done = 0; done < bookings; done += turn) {
      // Each server goes first in every other turn, and in every other round (--turn as large as a
      // round: the whole round of each in turn, as this bench first did).
      for (const side of (round + done / turn) % 2 ? sides : [...sides].reverse()) {
        const m = measured.get(side)!;
        const web = processCpuMs(side.server.pid!);
        const postgres = await postgresCpuSnapshot(sql);
        m.durations.push(...(await bookInTurn(side, Math.min(turn, bookings - done))));
        m.web += processCpuMs(side.server.pid!) - web;
        m.postgres += cpuUsedSince(postgres, await postgresCpuSnapshot(sql));
      }
    }
    for (const side of sides) {
      const m = measured.get(side)!;
      const durations = m.durations.sort((a, b) => a - b);
      const result = {
        p50: percentile(durations, 50),
        p90: percentile(durations, 90),
        web: m.web / bookings,
        postgres: m.postgres / bookings,
      };
      results.get(side.label)!.push(result);
      console.log(
        `round ${round} ${side.label}: p50 ${result.p50.toFixed(2)} ms, p90 ${result.p90.toFixed(2)} ms; CPU per booking: ${processLabel} ${result.web.toFixed(2)} ms, PostgreSQL ${result.postgres.toFixed(2)} ms`,
      );
    }
  }
  for (const [label, rows] of results)
    console.log(
      `${label}, medians of ${rounds} rounds of ${bookings} bookings at 1 connection: p50 ${median(rows.map((r) => r.p50)).toFixed(2)} ms, p90 ${median(rows.map((r) => r.p90)).toFixed(2)} ms; CPU per booking: ${processLabel} ${median(rows.map((r) => r.web)).toFixed(2)} ms, PostgreSQL ${median(rows.map((r) => r.postgres)).toFixed(2)} ms`,
    );
  if (sides.length === 2) {
    const [earlier, ours] = [...results.values()];
    const ratios = ours.map((r, i) => (r.p50 / earlier[i].p50).toFixed(2));
    console.log(`p50 this code / ${sides[0].label}, per round: ${ratios.join(', ')}`);
  }
} finally {
  for (const server of servers) server.kill('SIGTERM');
  await sql.end();
}
