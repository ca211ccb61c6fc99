// Availability on the demo venue with 60 tables and 400 reservations on the day (issue 4), measured
// on two identical venues side by side, one with tableOptimisation off and one with it on: the day is
// full, so most questions find no free table and the optimiser searches (issue 21).
// Targets: GET /availability p50 < 5 ms at 1 connection and >= 1,500 requests/s at 32 connections;
// GET /availability/days over 62 days < 150 ms; with optimisation on, unchanged within noise. Also the
// p50 of a booking (POST /reservations, 1 connection) on the same venues, on the days after the full
// one, with the web process's CPU per booking there.
// With an earlier commit, that commit is served too (same database) and measured side by side, in turn.
// Usage: npx tsx bench/availability.ts [seconds=10] [earlier-commit]
import autocannon from 'autocannon';
import type { ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { extractCommit } from './support/earlier-commit.js';
import { processCpuMs } from './support/process-cpu.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
const earlierRev = process.argv[3];
await prepareBenchDatabase('floorline_bench_availability');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();
const { analyzeChangedTables } = await import('../src/services/timers/analyze-tables.js');

const venues = { off: await createBenchTenant({ tableCount: 60 }), on: await createBenchTenant({ tableCount: 60 }) };

const env = benchServerEnv();
const port = 3941;
const earlierPort = 3943;
const earlier = earlierRev === undefined ? null : extractCommit(earlierRev);
const servers: ChildProcess[] = [await spawnServer('src/server.ts', env, port)];
if (earlier) servers.push(await spawnServer(resolve(earlier.dir, 'src/server.ts'), env, earlierPort));
const base = `http://127.0.0.1:${port}/api/v1`;
const headersOf = (key: string) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });
const day = addDays(instantToLocal('Europe/Rome', Date.now()).date, 1);

try {
  // 400 reservations on the day through the API, the same on both venues (seeded with optimisation
  // off, so that both floors are identical): the engine seats what it can, force books the rest.
  const grid = [...['12', '13'].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)), '14:00'];
  grid.push(...['19', '20', '21'].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)), '22:00');
  const setOptimisation = async ({ venueId, key }: { venueId: string; key: string }, value: 'off' | 'on') => {
    const res = await fetch(`${base}/venues/${venueId}`, {
      method: 'PATCH',
      headers: headersOf(key),
      body: JSON.stringify({ tableOptimisation: value }),
    });
    if (res.status !== 200) throw new Error(`venue: ${res.status} ${await res.text()}`);
  };
  for (const { venueId, key } of Object.values(venues)) {
    await setOptimisation({ venueId, key }, 'off');
    for (let i = 0; i < 400; i++) {
      const body = { venueId, serviceDate: day, time: grid[i % grid.length], partySize: 2 + (i % 3), force: true };
      const res = await fetch(`${base}/reservations`, { method: 'POST', headers: headersOf(key), body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`seeding: ${res.status} ${await res.text()}`);
    }
  }
  await setOptimisation(venues.on, 'on');
  // The seeded tables analysed, as worker-timers does every minute on a server without autovacuum
  // (this machine's): otherwise the server that seeded keeps the plans its connections made on empty
  // tables, and an earlier commit's server, first used after the seeding, plans for the seeded ones.
  await analyzeChangedTables(sql);
  const times = ['12:30', '13:15', '14:00', '19:00', '19:45', '20:30', '21:15', '22:00'];
  const run = async ({ venueId, key }: { venueId: string; key: string }, connections: number, duration: number, at = port) => {
    const requests = times.flatMap((time) =>
      [2, 4, 6].map((partySize) => ({
        method: 'GET' as const,
        path: `/api/v1/availability?venueId=${venueId}&serviceDate=${day}&time=${time}&partySize=${partySize}`,
      })),
    );
    const result = await autocannon({ url: `http://127.0.0.1:${at}`, connections, duration, headers: headersOf(key), requests });
    if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
    return result;
  };
  const daysP50 = async ({ venueId, key }: { venueId: string; key: string }, at = port) => {
    const durations: number[] = [];
    for (let i = 0; i < 30; i++) {
      const started = performance.now();
      const res = await fetch(
        `http://127.0.0.1:${at}/api/v1/availability/days?venueId=${venueId}&from=${day}&to=${addDays(day, 61)}&partySize=${2 + (i % 3)}`,
        { headers: headersOf(key) },
      );
      await res.json();
      if (res.status !== 200) throw new Error(`days: ${res.status}`);
      durations.push(performance.now() - started);
    }
    return durations.sort((a, b) => a - b)[15];
  };
  // Bookings one after another, each version in its turn on the same venue, spread over the 60 days
  // after the full one and over the grid: every version books into the same kind of night.
  let booked = 0;
  // With the web process's CPU per booking: at one connection a booking's latency is mostly that.
  // `days`: the bookings go to the days firstDay… firstDay + days - 1 after the full one.
  const bookingP50 = async ({ venueId, key }: { venueId: string; key: string }, at = port, firstDay = 1, days = 60) => {
    const server = servers[at === port ? 0 : 1];
    const cpuBefore = processCpuMs(server.pid!);
    const durations: number[] = [];
    for (let i = 0; i < 40; i++, booked++) {
      const body = {
        venueId,
        serviceDate: addDays(day, firstDay + (booked % days)),
        time: grid[booked % grid.length],
        partySize: 2 + (booked % 3),
      };
      const started = performance.now();
      const res = await fetch(`http://127.0.0.1:${at}/api/v1/reservations`, {
        method: 'POST',
        headers: headersOf(key),
        body: JSON.stringify(body),
      });
      await res.text();
      if (res.status !== 201) throw new Error(`booking: ${res.status}`);
      durations.push(performance.now() - started);
    }
    return { p50: durations.sort((a, b) => a - b)[20], webCpuMs: (processCpuMs(server.pid!) - cpuBefore) / durations.length };
  };
  const versions = earlier
    ? [
        { name: `${earlierRev} `, at: earlierPort },
        { name: 'this tree ', at: port },
      ]
    : [{ name: '', at: port }];
  // Warm-up: JIT, pools, key cache. Bookings too, on days after the measured ones: the seeding above
  // booked through this tree's server only, and an earlier commit's first measured bookings were
  // otherwise the first its process compiled (its p50 there about twice its later ones).
  for (const { at } of versions)
    for (const venue of Object.values(venues)) {
      await run(venue, 8, 2, at);
      await bookingP50(venue, at, 61, 25);
    }
  // Alternating: off, on, off, on (each version in turn) — the machine's drift weighs on all alike.
  for (const setting of ['off', 'on', 'off', 'on'] as const) {
    for (const { name, at } of versions) {
      const c1 = await run(venues[setting], 1, seconds, at);
      const c32 = await run(venues[setting], 32, seconds, at);
      const days = await daysP50(venues[setting], at);
      const booking = await bookingP50(venues[setting], at);
      console.log(
        `${name}tableOptimisation ${setting.padEnd(3)}  GET /availability 1 connection: ${c1.requests.average.toFixed(0)} req/s p50 ${c1.latency.p50} ms p99 ${c1.latency.p99} ms` +
          `   32 connections: ${c32.requests.average.toFixed(0)} req/s p50 ${c32.latency.p50} ms   /days (62 days) p50 ${days.toFixed(1)} ms   booking p50 ${booking.p50.toFixed(1)} ms (web CPU ${booking.webCpuMs.toFixed(1)} ms a booking)`,
      );
    }
  }
  console.log('targets: p50 < 5 ms at 1 connection, >= 1500 req/s at 32, /days < 150 ms; on within noise of off');
} finally {
  for (const server of servers) server.kill('SIGTERM');
  earlier?.remove();
  await sql.end();
}
