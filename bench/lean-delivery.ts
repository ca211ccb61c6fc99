// What a webhook delivery costs with none of the platform's code: the floor under bench/webhooks.ts's
// throughput phase on the same machine. Two worker processes (bench/support/lean-delivery-worker.ts),
// BullMQ at concurrency 50 each with completed jobs removed, each job three prepared statements on a
// one-index table (the row read, the attempt claimed, the outcome written) and one HMAC-signed
// keep-alive POST of a 1 KB body to a local receiver. N jobs are queued while the queue is paused,
// N more run first as a warm-up; then the released backlog: jobs/s and the CPU per job of the
// workers, PostgreSQL's backends and Redis (all of the Redis server: run it alone).
// --indexed: the table has the indexes of webhook_deliveries (src/db/schema/webhook-deliveries.ts) and
// both updates bump an indexed updated_at, as the delivery row's do: what its index upkeep costs.
// Usage: npx tsx bench/lean-delivery.ts [jobs=3000] [--indexed]
import { spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { recreateDatabase } from './support/bench-database.js';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs, redisCpuMs } from './support/process-cpu.js';

const indexed = process.argv.includes('--indexed');
const jobs = Number(process.argv.slice(2).find((arg) => !arg.startsWith('--')) ?? 3000);
// A database without the platform's schema: only the table below.
const databaseUrl = await recreateDatabase('floorline_bench_lean');
const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
await sql.unsafe(`create table lean_deliveries (id text primary key, payload text not null, status text not null default 'pending',
  attempts int not null default 0, last_attempt_at timestamptz, last_status int, next_attempt_at timestamptz,
  organisation_id uuid not null default gen_random_uuid(), venue_id uuid not null default gen_random_uuid(),
  automation_id uuid not null default gen_random_uuid(), endpoint_id uuid default gen_random_uuid(),
  run_id uuid not null default gen_random_uuid(), idempotency_key text not null default gen_random_uuid()::text,
  created_at timestamptz not null default clock_timestamp(), updated_at timestamptz not null default clock_timestamp())`);
// The eleven indexes webhook_deliveries has besides its primary key.
const deliveryIndexes = [
  '(automation_id, created_at, id)',
  "(automation_id) where status = 'pending'",
  "(updated_at) where status in ('delivered', 'discarded')",
  '(endpoint_id, created_at)',
  "(endpoint_id) where status = 'pending'",
  '(organisation_id, created_at, id)',
  '(organisation_id, updated_at, id)',
  "(next_attempt_at) where status = 'pending'",
  '(venue_id, created_at, id)',
];
if (indexed) {
  for (const columns of deliveryIndexes) await sql.unsafe(`create index on lean_deliveries ${columns}`);
  for (const column of ['idempotency_key', 'run_id']) await sql.unsafe(`create unique index on lean_deliveries (${column})`);
}
const payload = JSON.stringify({ type: 'reservation_created', data: { notes: 'x'.repeat(1000) } });
await sql.unsafe(`insert into lean_deliveries (id, payload) select 'd' || g, $1 from generate_series(1, ${2 * jobs}) g`, [payload]);

let arrived = 0;
const receiver = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    arrived++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
const prefix = `lean-bench-${process.pid}`;
const queue = new Queue<{ id: string }>('lean-delivery', { connection, prefix });
const workers = [0, 1].map(() =>
  spawn(process.execPath, ['--import', 'tsx', 'bench/support/lean-delivery-worker.ts', databaseUrl, prefix, receiverUrl, String(indexed)], {
    stdio: ['ignore', 'ignore', 'inherit'],
  }),
);

async function enqueue(from: number): Promise<void> {
  for (let i = from; i < from + jobs; i += 500) {
    const ids = Array.from({ length: Math.min(500, from + jobs - i) }, (_, k) => `d${i + k + 1}`);
    await queue.addBulk(ids.map((id) => ({ name: 'deliver', data: { id }, opts: { jobId: id, removeOnComplete: true } })));
  }
}
async function waitForArrivals(count: number): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (arrived < count) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} deliveries (${arrived} arrived)`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
try {
  await enqueue(0); // the warm-up
  await waitForArrivals(jobs);
  await queue.pause();
  await enqueue(jobs);
  const before = {
    workers: workers.map((w) => processCpuMs(w.pid!)),
    postgres: await postgresCpuSnapshot(sql),
    redis: await redisCpuMs(connection),
  };
  const started = performance.now();
  await queue.resume();
  await waitForArrivals(2 * jobs);
  const seconds = (performance.now() - started) / 1000;
  const perJob = (ms: number) => (ms / jobs).toFixed(2);
  const workersMs = workers.reduce((sum, w, i) => sum + processCpuMs(w.pid!) - before.workers[i], 0);
  const postgresMs = cpuUsedSince(before.postgres, await postgresCpuSnapshot(sql));
  const redisMs = (await redisCpuMs(connection)) - before.redis;
  console.log(
    `lean delivery${indexed ? " (the delivery row's indexes)" : ''}: ${jobs} jobs in ${seconds.toFixed(2)} s = ${(jobs / seconds).toFixed(0)} jobs/s with 2 worker processes`,
  );
  console.log(
    `CPU per job: workers ${perJob(workersMs)} ms, PostgreSQL ${perJob(postgresMs)}, Redis ${perJob(redisMs)}; load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
  );
} finally {
  for (const worker of workers) worker.kill('SIGTERM');
  await Promise.all(workers.map((w) => new Promise((resolve) => (w.exitCode !== null ? resolve(null) : w.once('exit', resolve)))));
  await queue.obliterate({ force: true }).catch(() => {});
  await queue.close();
  connection.disconnect();
  await sql.end();
  receiver.close();
}
