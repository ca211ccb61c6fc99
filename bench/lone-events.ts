// The event-processing step for events that arrive one at a time (a booking now and then, not a
// backlog): what worker-events' processing of one event costs when it is a batch of its own. The
// events are committed 250 a transaction beforehand, their jobs left in Redis unprocessed; then
// `processEvents` runs in this process for each event alone, one after another, four rounds. Per
// event: the wall time, this process's CPU, PostgreSQL's (the backends of this database) and Redis's.
// The delivery queue stays paused: the deliveries are enqueued, not sent.
// Usage: npx tsx bench/lone-events.ts [events=1000] [type=reservation_created]
// reservation_created: one automation of the venue acts on each (a run, a delivery, its job);
// reservation_cancelled: nothing acts on them and nobody waits at the venue (the table it frees has
// nobody to go to). Run the same command on two trees one after the other to compare them.
// --busy-neighbour: another venue of the platform has an automation on `type` and a party waiting
// today, which should change nothing of what this venue's events cost.
import { addBenchAutomation, createBenchTenant, endBenchConnections, prepareBenchDatabase } from './support/bench-database.js';
import { cpuUsedSince, postgresCpuSnapshot, redisCpuMs } from './support/process-cpu.js';

const busyNeighbour = process.argv.includes('--busy-neighbour');
const [countArg, typeArg] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
const count = Number(countArg ?? 1000);
const type = typeArg ?? 'reservation_created';
const rounds = 4;

await prepareBenchDatabase('floorline_bench_lone_events');
Object.assign(process.env, { LOG_LEVEL: 'warn' });
const { pool } = await import('../src/db/client.js');
const sql = pool();
const { systemActor, transactionWithEvents, settleEnqueuedEvents } = await import('../src/services/outbox/outbox.js');
const { getQueue, getQueueConnection } = await import('../src/queues/queues.js');
const { eventJob } = await import('../src/jobs/event-job.js');
const { webhookDeliveryJob } = await import('../src/jobs/webhook-delivery-job.js');
const { processEvents } = await import('../src/services/event-processing/process-event.js');
const { processConfig } = await import('../src/config.js');

const { organisationId, venueId } = await createBenchTenant({ tableCount: 4 });
// Nothing is delivered: the secret is never opened, the address never called.
await addBenchAutomation({ organisationId, venueId }, 'http://127.0.0.1:9/hooks', 'unused');
if (busyNeighbour) {
  const neighbour = await createBenchTenant({ tableCount: 4 });
  await addBenchAutomation(neighbour, 'http://127.0.0.1:9/hooks', 'unused', [type]);
  const { db } = await import('../src/db/client.js');
  const { waitlistEntries } = await import('../src/db/schema/index.js');
  // The bench venues' zone (createBenchTenant): today there.
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome' }).format(new Date());
  await db().insert(waitlistEntries).values({
    organisationId: neighbour.organisationId,
    venueId: neighbour.venueId,
    serviceDate: today,
    partySize: 2,
    name: 'Neighbour',
    position: 1,
  });
}

/** Commits `n` events of `type` in one transaction; returns their ids in the order they were emitted. */
async function emit(n: number): Promise<string[]> {
  const subjects = Array.from({ length: n }, () => crypto.randomUUID());
  await transactionWithEvents(systemActor('bench'), async (_tx, push) => {
    for (const id of subjects)
      push({
        organisationId,
        venueId,
        livemode: true,
        type: type as 'reservation_created',
        subjectType: 'reservation',
        subjectId: id,
        data: { reservation: { id, venueId } },
      });
  });
  const rows = await sql<
    Array<{ id: string }>
  >`select id::text from events where subject_id = any(${subjects}::uuid[]) order by created_at`;
  return rows.map((r) => r.id);
}

const deliveryQueue = getQueue(webhookDeliveryJob.queueName);
await deliveryQueue.pause();
const settings = processConfig();
const redis = getQueueConnection();
try {
  // Round 0 warms the process (the JIT, each connection's prepared statements): compare the later ones.
  for (let round = 0; round < rounds; round++) {
    const ids: string[] = [];
    for (let i = 0; i < count; i += 250) ids.push(...(await emit(Math.min(250, count - i))));
    await settleEnqueuedEvents();
    const ownBefore = process.cpuUsage();
    const postgresBefore = await postgresCpuSnapshot(sql);
    const redisBefore = await redisCpuMs(redis);
    const started = performance.now();
    for (const id of ids) await processEvents([id], settings);
    const wallMs = performance.now() - started;
    const own = process.cpuUsage(ownBefore);
    const postgresMs = cpuUsedSince(postgresBefore, await postgresCpuSnapshot(sql));
    const redisMs = (await redisCpuMs(redis)) - redisBefore;
    const perEvent = (ms: number) => ((ms / count) * 1000).toFixed(0);
    console.log(
      `round ${round}: ${count} ${type} events processed alone, per event: wall ${perEvent(wallMs)} µs, this process ${perEvent((own.user + own.system) / 1000)} µs, PostgreSQL ${perEvent(postgresMs)} µs, Redis ${perEvent(redisMs)} µs`,
    );
  }
} finally {
  await endBenchConnections([webhookDeliveryJob.queueName, eventJob.queueName]);
}
