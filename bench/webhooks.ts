// Webhook delivery throughput and end-to-end lag (issue 6).
// Two worker-webhooks processes and one worker-events process (child processes running
// workers/*.ts) deliver to a local receiver. Each event is the creation of a real reservation (a
// guest, a table), so the first attempt reads the reservation view as in production.
//   0. event processing: the N events behind them committed (250 a transaction) and processed by
//      worker-events into N deliveries: the time to the last delivery row, and the CPU per event
//      (the phase itself lasts until the deliveries enqueued already postponed have come due);
//   1. throughput: N deliveries queued while the queue is paused, then released: deliveries/s;
//   2. lag: events committed at a steady rate; time from the commit of each event to the arrival
//      of its webhook (p50, p99).
// Targets: >= 1,000 deliveries/s, p99 lag < 1 s.
// Usage: npx tsx bench/webhooks.ts [deliveries=3000] [lagEventsPerSecond=100] [lagSeconds=5]
// (WEBHOOKS_DB_POOL_SIZE=n: the database pool of the worker-webhooks processes, 4 by default;
// BENCH_TRACING=on: the workers trace, with the default sampler, every span exported over OTLP/HTTP
// protobuf (BENCH_OTLP_PROTOCOL=http/json: JSON) to a local collector that drops them; run it once
// without and once with to compare)
import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg } from 'node:os';
import { addBenchAutomation, createBenchTenant, endBenchConnections, prepareBenchDatabase } from './support/bench-database.js';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs, redisCpuMs } from './support/process-cpu.js';
import { profileFlags } from './support/profiling.js';
import { startDropCollector } from './support/drop-collector.js';
import { percentile } from './support/statistics.js';
import { freePort } from '../test/support/free-port.js';

const deliveries = Number(process.argv[2] ?? 3000);
const lagRate = Number(process.argv[3] ?? 100);
const lagSeconds = Number(process.argv[4] ?? 5);

await prepareBenchDatabase('floorline_bench_webhooks');
Object.assign(process.env, { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true', LOG_LEVEL: 'warn' });
const { eq } = await import('drizzle-orm');
const { db: openDb, pool } = await import('../src/db/client.js');
const db = openDb();
const sql = pool();
const { floorTables, guests, reservations, reservationTables } = await import('../src/db/schema/index.js');
const { systemActor, transactionWithEvents } = await import('../src/services/outbox/outbox.js');
const { getQueue, getQueueConnection } = await import('../src/queues/queues.js');
const { eventJob } = await import('../src/jobs/event-job.js');
const { webhookDeliveryJob } = await import('../src/jobs/webhook-delivery-job.js');

// The receiver: records when each reservation's webhook arrives.
const arrivals = new Map<string, number>();
let arrived = 0;
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const envelope = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    arrivals.set(envelope.data.reservation.id, performance.timeOrigin + performance.now());
    arrived++;
    res.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;

const { organisationId, venueId } = await createBenchTenant({ tableCount: 24 });
const { processConfig } = await import('../src/config.js');
const signingSecrets = new (await import('../src/services/webhooks/signing-secrets.js')).SigningSecretBox(processConfig().secretsKey);
const tableIds = (await db.select({ id: floorTables.id }).from(floorTables).where(eq(floorTables.venueId, venueId))).map((t) => t.id);
await addBenchAutomation({ organisationId, venueId }, receiverUrl, signingSecrets.sealNew().sealed);

// Tracing is the workers' only: this process commits the events, untraced, so each events job starts
// a trace of its own and its delivery continues it (docs/operations.md "Tracing").
const tracing = process.env.BENCH_TRACING === 'on';
const protocol = process.env.BENCH_OTLP_PROTOCOL;
for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
const collector = tracing ? await startDropCollector() : undefined;
// METRICS_PORT=0: two worker-webhooks processes would otherwise both want 9466.
const childEnv = {
  ...process.env,
  LOG_LEVEL: 'warn',
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
  METRICS_PORT: '0',
  ...(collector ? { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, ...(protocol ? { OTEL_EXPORTER_OTLP_PROTOCOL: protocol } : {}) } : {}),
};
// Every delivery goes to the one receiver: at most WEBHOOK_DESTINATION_CONCURRENCY attempts run at
// once (the workers read the environment this process has), which bounds the throughput phase
// (docs/benchmarks.md "Against 54c7427 on the fastest machine yet").
const destinationLimit = processConfig().WEBHOOK_DESTINATION_CONCURRENCY;
// worker-webhooks as docs/webhooks.md recommends deploying it: a small database pool (DB_POOL_SIZE, 4 unless given);
// each with a metrics port of its own, read for how many times a delivery's job ran.
const metricsToken = crypto.randomUUID();
const metricsPorts = [await freePort(), await freePort()];
const webhooksEnv = (metricsPort: number) => ({
  ...childEnv,
  DB_POOL_SIZE: process.env.WEBHOOKS_DB_POOL_SIZE ?? '4',
  METRICS_PORT: String(metricsPort),
  METRICS_TOKEN: metricsToken,
});
const children: ChildProcess[] = [
  { script: 'workers/events.ts', env: childEnv, role: 'worker-events' },
  ...metricsPorts.map((port) => ({ script: 'workers/webhooks.ts', env: webhooksEnv(port), role: 'worker-webhooks' })),
].map(({ script, env, role }) =>
  spawn(process.execPath, [...profileFlags(role), '--import', 'tsx', script], { env, stdio: ['ignore', 'ignore', 'inherit'] }),
);

let sequence = 0;
const firstSlot = Date.UTC(new Date().getUTCFullYear() + 1, 0, 1, 18);
const slotMs = 2 * 3600_000;

/** The n-th reservation: its own guest, and a table of its own for its two hours (one slot after another on each table). */
function reservationRows(n: number) {
  const id = crypto.randomUUID();
  const guestId = crypto.randomUUID();
  const startsAt = new Date(firstSlot + Math.floor(n / tableIds.length) * slotMs);
  const endsAt = new Date(startsAt.getTime() + slotMs);
  const tableId = tableIds[n % tableIds.length];
  const phoneNational = String(3_400_000_000 + n);
  return {
    guest: {
      id: guestId,
      organisationId,
      venueId,
      phone: `+39${phoneNational}`,
      phoneNational,
      firstName: 'Ada',
      lastName: `Bench ${n}`,
      allergens: [],
    },
    reservation: {
      id,
      organisationId,
      venueId,
      serviceDate: startsAt.toISOString().slice(0, 10),
      time: startsAt.toISOString().slice(11, 16),
      startsAt,
      endsAt,
      partySize: 2 + (n % 6),
      status: 'confirmed' as const,
      tableId,
      tableAssigned: true,
      source: 'api' as const,
      guestId,
    },
    table: { reservationId: id, tableId, venueId, during: `[${startsAt.toISOString()},${endsAt.toISOString()})` },
  };
}

/** Creates `count` reservations and their reservation_created events in one transaction; returns their ids and commit time. */
async function emit(count: number): Promise<{ ids: string[]; committedAt: number }> {
  const rows = Array.from({ length: count }, () => reservationRows(sequence++));
  await transactionWithEvents(systemActor('bench'), async (tx, push) => {
    await tx.insert(guests).values(rows.map((r) => r.guest));
    await tx.insert(reservations).values(rows.map((r) => r.reservation));
    await tx.insert(reservationTables).values(rows.map((r) => r.table));
    for (const { reservation } of rows) {
      push({
        organisationId,
        venueId,
        livemode: true,
        type: 'reservation_created',
        subjectType: 'reservation',
        subjectId: reservation.id,
        data: {
          reservation: {
            id: reservation.id,
            venueId,
            partySize: reservation.partySize,
            status: 'confirmed',
            source: 'api',
            time: reservation.time,
          },
        },
      });
    }
  });
  return { ids: rows.map((r) => r.reservation.id), committedAt: performance.timeOrigin + performance.now() };
}

async function waitFor(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * CPU milliseconds used so far by our own processes: the workers, the PostgreSQL backends of this
 * database, this process (the receiver), and the Redis server (all of it: other users of the same
 * server are counted too, so on a shared machine this figure is an upper bound).
 */
async function cpuSnapshot() {
  const own = process.cpuUsage();
  return {
    jobRuns: await deliveryJobRuns(),
    redis: await redisCpuMs(queueConnection),
    workers: children.reduce((sum, c) => sum + processCpuMs(c.pid!), 0),
    // The event-processing step (outbox event → events job → its deliveries enqueued) on its own.
    eventsWorker: processCpuMs(children[0].pid!),
    postgres: await postgresCpuSnapshot(sql),
    receiver: (own.user + own.system) / 1000,
  };
}
/**
 * Runs of delivery jobs so far in the worker-webhooks processes, by how they ended (completed,
 * postponed, failed), from their job_duration_seconds histogram: more runs than deliveries are jobs
 * postponed for a slot and run again.
 */
async function deliveryJobRuns(): Promise<Record<string, number>> {
  const runs: Record<string, number> = {};
  const line = new RegExp(`^job_duration_seconds_count\\{queue="${webhookDeliveryJob.queueName}",outcome="(\\w+)"\\} (\\d+)$`, 'gm');
  for (const port of metricsPorts) {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    for (const [, outcome, count] of (await res.text()).matchAll(line)) runs[outcome] = (runs[outcome] ?? 0) + Number(count);
  }
  return runs;
}
function cpuSince(before: Awaited<ReturnType<typeof cpuSnapshot>>, after: Awaited<ReturnType<typeof cpuSnapshot>>) {
  const runs = (outcome: string) => (after.jobRuns[outcome] ?? 0) - (before.jobRuns[outcome] ?? 0);
  return {
    jobRuns: { completed: runs('completed'), postponed: runs('postponed'), failed: runs('failed') },
    workers: after.workers - before.workers,
    eventsWorker: after.eventsWorker - before.eventsWorker,
    postgres: cpuUsedSince(before.postgres, after.postgres),
    receiver: after.receiver - before.receiver,
    redis: after.redis - before.redis,
  };
}

/** CPU milliseconds per event, or per delivery: each event of the backlog makes one delivery. */
const perEach = (ms: number) => (ms / deliveries).toFixed(2);

const queue = getQueue(webhookDeliveryJob.queueName);
const queueConnection = getQueueConnection();
try {
  // Warm-up: the three processes are up and connected,
  await emit(50);
  // (up to 2 minutes: on a loaded machine three processes loading tsx and the tracing SDK took over 30 s)
  await waitFor(() => arrived >= 50, 120_000, 'warm-up deliveries');
  // then three times as many deliveries as are measured, so that the measured phases run code the JIT
  // has optimised, as a worker does after its first minutes: after 50 only, compiling was about a
  // fifth of the workers' CPU in the throughput phase (perf, on-CPU samples); after as many as are
  // measured (about 1,500 per process), each process still optimised 80 to 120 functions there, most
  // for the first time: those run once per delivery, which V8 tiers up only after a few thousand
  // calls (docs/benchmarks.md "What a delivery's workers spend, looked at again").
  const warmUp = 3 * deliveries;
  for (let i = 0; i < warmUp; i += 250) await emit(Math.min(250, warmUp - i));
  await waitFor(() => arrived >= 50 + warmUp, 240_000, 'warm-up deliveries');

  // 1. Throughput: a backlog of N deliveries, released at once.
  await queue.pause();
  // 0. The event-processing step (outbox → events job → the deliveries enqueued), while the backlog is made.
  const emitCpuBefore = await cpuSnapshot();
  const emitStarted = performance.now();
  for (let i = 0; i < deliveries; i += 250) await emit(Math.min(250, deliveries - i));
  // Jobs carry fair priorities (docs/architecture.md "Fair queues"): they wait in BullMQ's prioritized set.
  const queued = async () => Object.values(await queue.getJobCounts('wait', 'prioritized')).reduce((a, b) => a + b, 0);
  await waitFor(async () => (await queued()) >= deliveries, 60_000, 'deliveries to be queued');
  const emitSeconds = (performance.now() - emitStarted) / 1000;
  // The step's own time ends with the last delivery row it wrote; the phase lasts until the deliveries
  // enqueued already postponed (DestinationSlots.holdBack, about their turn) have come due.
  const [{ lastRowAt }] = await sql<
    Array<{ lastRowAt: number }>
  >`select extract(epoch from max(created_at)) * 1000 as "lastRowAt" from webhook_deliveries`;
  const stepSeconds = (Number(lastRowAt) - (performance.timeOrigin + emitStarted)) / 1000;
  const eventCpu = cpuSince(emitCpuBefore, await cpuSnapshot());
  console.log(
    `event processing: ${deliveries} events committed (250 a transaction) and made into deliveries in ${stepSeconds.toFixed(2)} s (${(deliveries / stepSeconds).toFixed(0)} events/s; all queued, the held-back ones come due, after ${emitSeconds.toFixed(2)} s); CPU per event: worker-events ${perEach(eventCpu.eventsWorker)} ms, PostgreSQL ${perEach(eventCpu.postgres)} (this process's inserts included), Redis ${perEach(eventCpu.redis)}`,
  );
  const before = arrived;
  const cpuBefore = await cpuSnapshot();
  const released = performance.timeOrigin + performance.now();
  await queue.resume();
  await waitFor(() => arrived >= before + deliveries, 60_000, 'the backlog to be delivered');
  const seconds = (performance.timeOrigin + performance.now() - released) / 1000;
  const cpu = cpuSince(cpuBefore, await cpuSnapshot());
  console.log(
    `throughput: ${deliveries} deliveries in ${seconds.toFixed(2)} s = ${(deliveries / seconds).toFixed(0)} deliveries/s with 2 worker-webhooks processes, tracing ${tracing ? `on (${protocol ?? 'http/protobuf'})` : 'off'}, to one destination at most ${destinationLimit} at once (target >= 1000)`,
  );
  console.log(
    `CPU per delivery: ${perEach(cpu.workers + cpu.postgres + cpu.receiver + cpu.redis)} ms (workers ${perEach(cpu.workers)}, PostgreSQL ${perEach(cpu.postgres)}, Redis ${perEach(cpu.redis)}, receiver ${perEach(cpu.receiver)}); load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
  );
  const { completed, postponed, failed } = cpu.jobRuns;
  console.log(
    `job runs per delivery: ${((completed + postponed + failed) / deliveries).toFixed(2)} (${postponed} postponed for a slot or a predecessor, ${failed} failed)`,
  );

  // 2. Lag: one event per transaction at a steady rate.
  const committed = new Map<string, number>();
  const interval = 1000 / lagRate;
  const lagCpuBefore = await cpuSnapshot();
  const start = performance.now();
  for (let i = 0; i < lagRate * lagSeconds; i++) {
    const wait = start + i * interval - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    void emit(1).then(({ ids, committedAt }) => committed.set(ids[0], committedAt));
  }
  await waitFor(
    () => [...committed.keys()].length === lagRate * lagSeconds && [...committed.keys()].every((id) => arrivals.has(id)),
    30_000,
    'lag deliveries',
  );
  const lagCpu = cpuSince(lagCpuBefore, await cpuSnapshot());
  const lags = [...committed].map(([id, at]) => arrivals.get(id)! - at).sort((a, b) => a - b);
  console.log(
    `lag commit → webhook at ${lagRate} events/s for ${lagSeconds} s: p50 ${percentile(lags, 50).toFixed(0)} ms, p99 ${percentile(lags, 99).toFixed(0)} ms, max ${lags[lags.length - 1].toFixed(0)} ms (target p99 < 1000 ms)`,
  );
  // One event per transaction: what each event and its delivery cost at this rate, against the
  // batches of the phases above (this process commits the events and receives the webhooks).
  const perLagEvent = (ms: number) => (ms / lags.length).toFixed(2);
  console.log(
    `lag phase CPU per event: worker-events ${perLagEvent(lagCpu.eventsWorker)} ms, worker-webhooks ${perLagEvent(lagCpu.workers - lagCpu.eventsWorker)}, PostgreSQL ${perLagEvent(lagCpu.postgres)} (this process's inserts included), Redis ${perLagEvent(lagCpu.redis)}, this process ${perLagEvent(lagCpu.receiver)}; load average ${loadavg()[0].toFixed(1)}`,
  );
} finally {
  for (const child of children) child.kill('SIGTERM');
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once('exit', r)))));
  await endBenchConnections([webhookDeliveryJob.queueName, eventJob.queueName]);
  receiver.closeAllConnections();
  receiver.close();
  if (collector) console.log(`exported to the collector: ${(collector.bytes() / 1e6).toFixed(1)} MB`);
  collector?.close();
}
