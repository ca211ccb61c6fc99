// Authenticated GET /api/v1/venues/:id through the full middleware chain (auth, rate limit, request id,
// validation, one log line per request at level info, the request-duration histogram, a metrics port
// open) against a bare Express route doing the same database read.
// Targets (issue 2): the chain costs < 30 % of the bare route's throughput; p50 < 5 ms.
// Usage: npx tsx bench/http-overhead.ts [seconds=10]
import autocannon from 'autocannon';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
await prepareBenchDatabase('floorline_bench_http');
const { sql } = await import('../src/db/client.js');

const { venueId, key } = await createBenchTenant();
await sql.end();

const env = benchServerEnv('info');
const full = await spawnServer('src/server.ts', { ...env, METRICS_PORT: '3903' }, 3901);
const bare = await spawnServer('bench/support/bare-venue-server.ts', env, 3902);

async function measure(url: string, connections: number, headers: Record<string, string>) {
  const result = await autocannon({ url, connections, duration: seconds, headers });
  if (result.non2xx || result.errors) throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 };
}

try {
  const auth = { authorization: `Bearer ${key}` };
  // Warm both servers (JIT, pools, key cache).
  await autocannon({ url: `http://127.0.0.1:3901/api/v1/venues/${venueId}`, connections: 8, duration: 2, headers: auth });
  await autocannon({ url: `http://127.0.0.1:3902/venues/${venueId}`, connections: 8, duration: 2 });
  const fullC32 = await measure(`http://127.0.0.1:3901/api/v1/venues/${venueId}`, 32, auth);
  const bareC32 = await measure(`http://127.0.0.1:3902/venues/${venueId}`, 32, {});
  const fullC1 = await measure(`http://127.0.0.1:3901/api/v1/venues/${venueId}`, 1, auth);
  const bareC1 = await measure(`http://127.0.0.1:3902/venues/${venueId}`, 1, {});
  const row = (name: string, m: { rps: number; p50: number; p99: number }) => `${name.padEnd(34)} ${m.rps.toFixed(0).padStart(7)} req/s   p50 ${m.p50} ms   p99 ${m.p99} ms`;
  console.log(row('full chain, 32 connections', fullC32));
  console.log(row('bare Express, 32 connections', bareC32));
  console.log(row('full chain, 1 connection', fullC1));
  console.log(row('bare Express, 1 connection', bareC1));
  const cost = 1 - fullC32.rps / bareC32.rps;
  console.log(`throughput ratio full/bare: ${(fullC32.rps / bareC32.rps).toFixed(2)} (middleware cost ${(cost * 100).toFixed(1)} %, target < 30 %)`);
  console.log(`authenticated GET p50 at 1 connection: ${fullC1.p50} ms (target < 5 ms)`);
} finally {
  full.kill('SIGTERM');
  bare.kill('SIGTERM');
}
