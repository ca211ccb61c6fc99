// Authenticated GET /api/v1/venues/:id through the full middleware chain (auth, rate limit, request id,
// validation, one log line per request at level info, the request-duration histogram, a metrics port
// open) against a bare Express route doing the same database read.
// Targets: the chain costs < 20 % of the bare route's throughput with metrics and request logging on, entered through
// Express's public API only (docs/architecture.md "Public seams only"); p50 < 5 ms.
// Usage: npx tsx bench/http-overhead.ts [seconds=10] [rounds=3]
// The two servers are measured in alternating rounds and each figure is the median of its rounds: on a
// shared machine a neighbour's burst then spoils one round of each, not the whole comparison.
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { processCpuMs } from './support/process-cpu.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
const rounds = Number(process.argv[3] ?? 3);
await prepareBenchDatabase('floorline_bench_http');
const sql = (await import('../src/db/client.js')).pool();

const { venueId, key } = await createBenchTenant();
await sql.end();

const env = benchServerEnv('info');
const full = await spawnServer('src/server.ts', { ...env, METRICS_PORT: '3903' }, 3901);
const bare = await spawnServer('bench/support/bare-venue-server.ts', env, 3902);

/**
 * Throughput and latency, and the server's CPU time per request: on a machine shared with other work
 * the throughput ratio swings with the neighbours' load, the CPU a request costs the server much less.
 */
async function measure(url: string, connections: number, headers: Record<string, string>, server: ChildProcess) {
  const cpuBefore = processCpuMs(server.pid!);
  const result = await autocannon({ url, connections, duration: seconds, headers });
  const cpuMicros = ((processCpuMs(server.pid!) - cpuBefore) * 1e3) / result.requests.total;
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, cpuMicros };
}

/** Each figure's median over the rounds. */
function medianOf<T extends Record<string, number>>(figures: T[]): T {
  const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
  return Object.fromEntries(Object.keys(figures[0]).map((k) => [k, median(figures.map((f) => f[k]))])) as T;
}

try {
  const auth = { authorization: `Bearer ${key}` };
  // Warm both servers (JIT, pools, key cache).
  await autocannon({ url: `http://127.0.0.1:3901/api/v1/venues/${venueId}`, connections: 8, duration: 2, headers: auth });
  await autocannon({ url: `http://127.0.0.1:3902/venues/${venueId}`, connections: 8, duration: 2 });
  type Figures = Awaited<ReturnType<typeof measure>>;
  const fullRounds: Figures[] = [];
  const bareRounds: Figures[] = [];
  for (let round = 0; round < rounds; round++) {
    fullRounds.push(await measure(`http://127.0.0.1:3901/api/v1/venues/${venueId}`, 32, auth, full));
    bareRounds.push(await measure(`http://127.0.0.1:3902/venues/${venueId}`, 32, {}, bare));
  }
  const fullC32 = medianOf(fullRounds);
  const bareC32 = medianOf(bareRounds);
  console.log(
    `rounds of 32 connections, full: ${fullRounds.map((r) => r.rps.toFixed(0)).join(' ')} req/s; bare: ${bareRounds.map((r) => r.rps.toFixed(0)).join(' ')} req/s`,
  );
  const fullC1 = await measure(`http://127.0.0.1:3901/api/v1/venues/${venueId}`, 1, auth, full);
  const bareC1 = await measure(`http://127.0.0.1:3902/venues/${venueId}`, 1, {}, bare);
  const row = (name: string, m: { rps: number; p50: number; p99: number; cpuMicros: number }) =>
    `${name.padEnd(34)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${m.p50} ms   p99 ${m.p99} ms   server CPU ${m.cpuMicros.toFixed(0)} µs/request`;
  console.log(row('full chain, 32 connections', fullC32));
  console.log(row('bare Express, 32 connections', bareC32));
  console.log(row('full chain, 1 connection', fullC1));
  console.log(row('bare Express, 1 connection', bareC1));
  const cost = 1 - fullC32.rps / bareC32.rps;
  console.log(
    `throughput ratio full/bare: ${(fullC32.rps / bareC32.rps).toFixed(2)} (middleware cost ${(cost * 100).toFixed(1)} %, target < 20 %)`,
  );
  const cpuCost = 1 - bareC32.cpuMicros / fullC32.cpuMicros;
  console.log(
    `server CPU per request full/bare at 32 connections: ${(fullC32.cpuMicros / bareC32.cpuMicros).toFixed(2)} (the chain's share of the full route's CPU: ${(cpuCost * 100).toFixed(1)} %)`,
  );
  console.log(`authenticated GET p50 at 1 connection: ${fullC1.p50} ms (target < 5 ms)`);
  // What metrics add to each request, measured in this process alone (insensitive to the machine's load).
  const { observeHttpRequest } = await import('../src/metrics/counters.js');
  const observations = 1_000_000;
  const started = performance.now();
  for (let i = 0; i < observations; i++) observeHttpRequest('GET', '/api/v1/venues/:id', 200, (i % 50) / 1000);
  console.log(`request-duration histogram: ${(((performance.now() - started) * 1000) / observations).toFixed(2)} µs per observed request`);
} finally {
  full.kill('SIGTERM');
  bare.kill('SIGTERM');
}
