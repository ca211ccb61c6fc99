// Live event stream (GET /events/stream, docs/webhooks.md "Live event stream").
// Two web processes (src/server.ts) serve streams; this process commits events through the outbox.
//   1. latency: events committed at a steady rate (100/s by default); a client on each web process
//      records when each arrives: commit → client p50 / p99 (target: well under 1 s);
//   2. memory: 1,000 idle streams held on one web process: its RSS before and after, per
//      connection, and again after a keep-alive round (flat memory); then one event fanned out to
//      all 1,000 (time until the last client has it).
// Usage: npx tsx bench/sse.ts [eventsPerSecond=100] [seconds=10] [idleConnections=1000]
import { readFileSync } from 'node:fs';
import { freePort } from '../test/support/free-port.js';
import { cpus, loadavg } from 'node:os';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';
import { openSse, type SseStream } from '../test/support/sse-client.js';

const rate = Number(process.argv[2] ?? 100);
const seconds = Number(process.argv[3] ?? 10);
const idleCount = Number(process.argv[4] ?? 1000);

await prepareBenchDatabase('floorline_bench_sse');
Object.assign(process.env, { LOG_LEVEL: 'warn' });
const sql = (await import('../src/db/client.js')).pool();
const { systemActor, transactionWithEvents } = await import('../src/services/outbox/outbox.js');
const { closeQueues } = await import('../src/queues/queues.js');
const { closeRedis } = await import('../src/redis.js');
const { organisationId, venueId, key } = await createBenchTenant();

const ports = [await freePort(), await freePort()];
const webs = await Promise.all(ports.map((port) => spawnServer('src/server.ts', benchServerEnv(), port)));
const streamUrl = (port: number) => `http://127.0.0.1:${port}/api/v1/events/stream`;

function rssKb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(line?.replace(/\D/g, '') ?? 0);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const now = () => performance.timeOrigin + performance.now();

/** One event through the outbox, as a domain change would write it; resolves at its commit. */
async function commitEvent(seq: number): Promise<number> {
  await transactionWithEvents(systemActor('bench'), async (_tx, emit) => {
    emit({ organisationId, venueId, livemode: true, type: 'reservation_created', subjectType: 'none', subjectId: null, data: { seq } });
  });
  return now();
}

const seqOf = (s: SseStream) => new Map(s.events().map((f) => [(JSON.parse(f.data!) as { data: { seq: number } }).data.seq, f.receivedAt]));

// 1. Latency at a steady rate, a client on each web process.
const clients = await Promise.all(ports.map((port) => openSse(streamUrl(port), key)));
const total = rate * seconds;
const committedAt = new Map<number, number>();
const started = now();
const inFlight: Promise<void>[] = [];
for (let i = 0; i < total; i++) {
  const due = started + (i * 1000) / rate;
  const wait = due - now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  inFlight.push(commitEvent(i).then((at) => void committedAt.set(i, at)));
}
await Promise.all(inFlight);
await Promise.all(clients.map((c) => c.waitForEvents(total, 30_000)));
console.log(
  `latency: ${total} events at ${rate}/s over ${seconds} s (2 web processes; ${cpus().length} cores, load average ${loadavg()[0].toFixed(1)})`,
);
clients.forEach((client, n) => {
  const arrivals = seqOf(client);
  const lags = [...committedAt].map(([seq, at]) => Math.max(0, arrivals.get(seq)! - at)).sort((a, b) => a - b);
  const repeated = client.events().length - arrivals.size;
  console.log(
    `  web ${n + 1}: commit → client p50 ${percentile(lags, 50).toFixed(1)} ms, p99 ${percentile(lags, 99).toFixed(1)} ms, max ${lags[lags.length - 1].toFixed(1)} ms; ${arrivals.size}/${total} received, ${repeated} repeated`,
  );
  client.close();
});

// 2. Memory of idle streams on one web process.
const pid = webs[0].pid!;
await new Promise((r) => setTimeout(r, 1000));
const before = rssKb(pid);
const idle: SseStream[] = [];
for (let i = 0; i < idleCount; i += 100) {
  idle.push(...(await Promise.all(Array.from({ length: Math.min(100, idleCount - i) }, () => openSse(streamUrl(ports[0]), key)))));
}
await Promise.all(idle.map((s) => s.waitFor((frames) => frames.length >= 1, 30_000)));
await new Promise((r) => setTimeout(r, 2000));
const after = rssKb(pid);
console.log(`memory: ${idle.length} idle streams on one web process`);
console.log(
  `  RSS ${(before / 1024).toFixed(1)} MiB before, ${(after / 1024).toFixed(1)} MiB with them: ${((after - before) / idle.length).toFixed(1)} KiB per connection`,
);
await new Promise((r) => setTimeout(r, 16_000));
const later = rssKb(pid);
const keptAlive = idle.filter((s) => s.frames.some((f) => f.comment === 'keep-alive')).length;
console.log(
  `  16 s later (a keep-alive round, ${keptAlive}/${idle.length} streams got it): RSS ${(later / 1024).toFixed(1)} MiB (${later >= after ? '+' : ''}${((later - after) / 1024).toFixed(1)} MiB)`,
);
const fanOutAt = await commitEvent(-1);
await Promise.all(idle.map((s) => s.waitForEvents(1, 30_000)));
const lastArrival = Math.max(...idle.map((s) => s.events()[0].receivedAt));
console.log(
  `  one event fanned out to all ${idle.length}: the last client had it ${(lastArrival - fanOutAt).toFixed(1)} ms after its commit`,
);

for (const s of idle) s.close();
for (const web of webs) web.kill('SIGTERM');
await closeQueues();
await closeRedis();
await sql.end();
