// Availability on the demo venue with 60 tables and 400 reservations on the day (issue 4).
// Targets: GET /availability p50 < 5 ms at 1 connection and >= 1,500 requests/s at 32 connections;
// GET /availability/days over 62 days < 150 ms.
// Usage: npx tsx bench/availability.ts [seconds=10]
import autocannon from 'autocannon';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
await prepareBenchDatabase('floorline_bench_availability');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const { sql } = await import('../src/db/client.js');

const { venueId, key } = await createBenchTenant({ tableCount: 60 });
await sql.end();

const env = benchServerEnv();
const port = 3941;
const server = await spawnServer('src/server.ts', env, port);
const base = `http://127.0.0.1:${port}/api/v1`;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const day = addDays(instantToLocal('Europe/Rome', Date.now()).date, 1);

try {
  // 400 reservations on the day through the API: the engine seats what it can, force books the rest.
  const grid = [...['12', '13'].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)), '14:00'];
  grid.push(...['19', '20', '21'].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)), '22:00');
  let seeded = 0;
  for (let i = 0; seeded < 400; i++) {
    const body = { venueId: venueId, serviceDate: day, time: grid[i % grid.length], partySize: 2 + (i % 3), force: true };
    const res = await fetch(`${base}/reservations`, { method: 'POST', headers, body: JSON.stringify(body) });
    if (res.status !== 201) throw new Error(`seeding: ${res.status} ${await res.text()}`);
    seeded++;
  }
  const times = ['12:30', '13:15', '14:00', '19:00', '19:45', '20:30', '21:15', '22:00'];
  const requests = times.flatMap((time) => [2, 4, 6].map((partySize) => ({ method: 'GET' as const, path: `/api/v1/availability?venueId=${venueId}&serviceDate=${day}&time=${time}&partySize=${partySize}` })));
  const run = async (connections: number, duration: number) => {
    const result = await autocannon({ url: `http://127.0.0.1:${port}`, connections, duration, headers, requests });
    if (result.non2xx || result.errors) throw new Error(`${result.non2xx} non-2xx, ${result.errors} errors`);
    return result;
  };
  await run(8, 2); // warm-up: JIT, pools, key cache
  const c1 = await run(1, seconds);
  const c32 = await run(32, seconds);
  console.log(`GET /availability, 1 connection:   ${c1.requests.average.toFixed(0)} req/s   p50 ${c1.latency.p50} ms   p99 ${c1.latency.p99} ms   (target p50 < 5 ms)`);
  console.log(`GET /availability, 32 connections: ${c32.requests.average.toFixed(0)} req/s   p50 ${c32.latency.p50} ms   p99 ${c32.latency.p99} ms   (target >= 1500 req/s)`);

  const durations: number[] = [];
  for (let i = 0; i < 30; i++) {
    const started = performance.now();
    const res = await fetch(`${base}/availability/days?venueId=${venueId}&from=${day}&to=${addDays(day, 61)}&partySize=${2 + (i % 3)}`, { headers });
    await res.json();
    if (res.status !== 200) throw new Error(`days: ${res.status}`);
    durations.push(performance.now() - started);
  }
  durations.sort((a, b) => a - b);
  console.log(`GET /availability/days (62 days): p50 ${durations[15].toFixed(1)} ms   max ${durations.at(-1)!.toFixed(1)} ms   (target < 150 ms)`);
} finally {
  server.kill('SIGTERM');
}
