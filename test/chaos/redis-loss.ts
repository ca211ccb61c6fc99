// Scenario: Redis SIGKILLed while bookings stream in with a webhook automation active, started again
// EMPTY after an outage. PostgreSQL must make up for everything Redis lost: every committed
// reservation gets its webhook, the timer schedules come back, and no process is restarted.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { inArray, isNull, sql } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { timerJob, timerSchedules } from '../../src/jobs/timer-job.js';
import { bullPrefixOf } from '../../src/redis/key-layout.js';
import {
  awaitWebhooks,
  bookSteadily,
  describeTraffic,
  chaosQueuePrefix,
  committedEventIds,
  createChaosTenant,
  roleEnv,
  routeBookingsTo,
  seconds,
  sleep,
  startDestination,
  Tally,
  trafficFigures,
  type TrafficFigures,
} from './chaos-world.js';
import { endProcess, startOwnRedis, startRole, type Role, type RoleProcess } from './own-processes.js';

export interface RedisLossOptions {
  databaseUrl: string;
  /** Bookings per second through the API, before, during and after the outage. */
  bookingsPerSecond?: number;
  /** Traffic before the kill, the outage, traffic after Redis's return (ms). */
  beforeMs?: number;
  outageMs?: number;
  afterMs?: number;
  /**
   * Events committed during the outage by processes that then died (rows written straight to the
   * outbox, nobody to enqueue them): only the sweeper can hand them back, in bulk.
   */
  strandedEvents?: number;
  /** Processes per worker role (the web role runs once). */
  workersPerRole?: number;
  /** Give up waiting for the deliveries after this long past Redis's return (ms). */
  deadlineMs?: number;
}

/** `committed` counts the booked reservations' events and the stranded ones. */
export interface RedisLossFigures extends TrafficFigures {
  /** From Redis's return until the worker-timers schedules were all back in it. */
  schedulesBackMs: number | null;
  /** From Redis's return until every event committed before its return was processed by worker-events (dispatchedAt). */
  backlogProcessedMs: number | null;
  /** From Redis's return until the last event committed before its return had its webhook. */
  backlogDispatchedMs: number | null;
  /** With stranded events: throughput after Redis's return, sampled every second, of events processed (dispatchedAt set) and webhooks received. */
  eventsRate: Throughput | null;
  deliveriesRate: Throughput | null;
}

/** The average rate from the first to the last change of a count, and the best 5 s of it (per second). */
export interface Throughput {
  average: number;
  peak5s: number;
}

function throughput(samples: Array<{ at: number; count: number }>): Throughput {
  const moving = samples.filter((s, i) => i > 0 && s.count !== samples[i - 1].count);
  if (!moving.length) return { average: 0, peak5s: 0 };
  const firstIndex = samples.indexOf(moving[0]) - 1;
  const first = samples[firstIndex];
  const last = moving[moving.length - 1];
  let peak5s = 0;
  for (let i = firstIndex; i < samples.length; i++) {
    const end = samples.find((s) => s.at >= samples[i].at + 5_000);
    if (end) peak5s = Math.max(peak5s, ((end.count - samples[i].count) * 1000) / (end.at - samples[i].at));
  }
  return { average: ((last.count - first.count) * 1000) / Math.max(1, last.at - first.at), peak5s };
}

const perSecond = (t: Throughput) => `${Math.round(t.average)}/s (best 5 s: ${Math.round(t.peak5s)}/s)`;

const after = (ms: number | null) => (ms === null ? 'never' : seconds(ms));

export function describeRedisLoss(f: RedisLossFigures): string {
  return (
    `${describeTraffic(f)} · schedules back ${after(f.schedulesBackMs)} after Redis returned · ` +
    `backlog's events processed ${after(f.backlogProcessedMs)}, its webhooks all received ${after(f.backlogDispatchedMs)} after Redis returned · ` +
    (f.eventsRate && f.deliveriesRate
      ? `events processed ${perSecond(f.eventsRate)}, webhooks received ${perSecond(f.deliveriesRate)} · `
      : '') +
    `processes exited ${f.exitedProcesses}`
  );
}

/** Outbox rows of a process that died before enqueueing them. */
async function strandEvents(tenant: { organisationId: string; venueId: string }, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, n - i) }, () => ({
      organisationId: tenant.organisationId,
      venueId: tenant.venueId,
      livemode: true,
      type: 'reservation_created',
      subjectType: 'none' as const,
      subjectId: null,
      data: { reservation: { id: randomUUID(), venueId: tenant.venueId, partySize: 2, source: 'api' } },
      createdAt: sql`clock_timestamp()` as unknown as Date,
    }));
    await db().insert(events).values(rows);
  }
}

export async function runRedisLoss(options: RedisLossOptions): Promise<RedisLossFigures> {
  const {
    bookingsPerSecond = 10,
    beforeMs = 5_000,
    outageMs = 15_000,
    afterMs = 5_000,
    strandedEvents = 0,
    workersPerRole = 1,
    deadlineMs = 90_000,
  } = options;
  const redis = await startOwnRedis();
  const env = roleEnv(options.databaseUrl, redis.url);
  const processes: RoleProcess[] = [];
  const destination = await startDestination();
  let observer: Queue | undefined;
  try {
    const workerRoles: Role[] = ['events', 'webhooks', 'timers'];
    const started = await Promise.all([
      startRole('web', env),
      ...workerRoles.flatMap((role) => Array.from({ length: role === 'timers' ? 1 : workersPerRole }, () => startRole(role, env))),
    ]);
    processes.push(...started);
    const web = started[0];
    const tenant = await createChaosTenant();
    await routeBookingsTo(web.url!, tenant, destination.url);

    const tally = new Tally();
    let stop = false;
    const traffic = bookSteadily(web.url!, tenant, bookingsPerSecond, () => stop, tally);
    await sleep(beforeMs);
    await redis.kill();
    if (strandedEvents) await strandEvents(tenant, strandedEvents);
    await sleep(outageMs);
    await redis.start();
    const returnedAt = Date.now();
    // CHAOS_TIMELINE with pg_stat_statements preloaded (OWN_PG_OPTIONS): the statements' times from now on.
    const statements = process.env.CHAOS_TIMELINE
      ? await db()
          .execute(sql`create extension if not exists pg_stat_statements`)
          .then(() => db().execute(sql`select pg_stat_statements_reset()`))
          .then(
            () => true,
            () => false,
          )
      : false;

    // The schedules of worker-timers, as Bull Board would list them, through a connection made now.
    const timers = new Queue(timerJob.queueName, {
      connection: { host: '127.0.0.1', port: redis.port, maxRetriesPerRequest: null },
      prefix: bullPrefixOf(chaosQueuePrefix, timerJob.queueName),
    });
    timers.on('error', () => {});
    observer = timers;
    let schedulesBackMs: number | null = null;
    const watchSchedules = (async () => {
      while (Date.now() - returnedAt < deadlineMs) {
        const count = await timers.getJobSchedulersCount().catch(() => 0);
        if (count >= timerSchedules.length) return void (schedulesBackMs = Date.now() - returnedAt);
        await sleep(200);
      }
    })();
    // Throughput from now on: events processed by worker-events, webhooks received by the destination.
    const eventSamples: Array<{ at: number; count: number }> = [];
    const deliverySamples: Array<{ at: number; count: number }> = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const at = Date.now();
        // Events left to process (the scenario's database has no others), by the index of undispatched events:
        // cheap enough to ask every second. Counted negatively: the count grows as events are processed.
        const [row] = await db()
          .select({ n: sql<number>`count(*)::int` })
          .from(events)
          .where(isNull(events.dispatchedAt))
          .catch(() => [{ n: -(eventSamples.at(-1)?.count ?? 0) }]);
        eventSamples.push({ at, count: -row.n });
        deliverySamples.push({ at, count: destination.keys().size });
        await sleep(1000 - (Date.now() - at));
      }
    })();
    await sleep(afterMs);
    stop = true;
    await traffic;
    const committedBeforeReturn = await committedEventIds(tenant.venueId, new Date(returnedAt));

    const webhooks = await awaitWebhooks(destination, tenant.venueId, returnedAt + deadlineMs);
    await watchSchedules;
    sampling = false;
    await sampler;
    // CHAOS_TIMELINE=1: the samples, seconds after Redis's return → events processed / webhooks received.
    if (process.env.CHAOS_TIMELINE) {
      const line = eventSamples
        .map((e, i) => `${((e.at - returnedAt) / 1000).toFixed(0)}:${-e.count}/${deliverySamples[i].count}`)
        .join(' ');
      console.error(`redis-loss timeline (s after return: events left to process/webhooks received): ${line}`);
      const statsClient = new Redis(redis.port, '127.0.0.1');
      const stats = await statsClient.info('commandstats').catch(() => '');
      statsClient.disconnect();
      const calls = [...stats.matchAll(/cmdstat_(\w+):calls=(\d+),usec=(\d+)/g)].map(([, cmd, n, usec]) => ({
        cmd,
        n: Number(n),
        ms: Number(usec) / 1000,
      }));
      calls.sort((a, b) => b.ms - a.ms);
      console.error(
        `redis commands since its return: ${calls
          .slice(0, 15)
          .map((c) => `${c.cmd} ${c.n} (${c.ms.toFixed(0)} ms)`)
          .join(', ')}`,
      );
      if (statements) {
        const top = await db().execute(
          sql`select calls, round(total_exec_time)::int as ms, left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 90) as query from pg_stat_statements order by total_exec_time desc limit 12`,
        );
        for (const row of top as unknown as Array<{ calls: number; ms: number; query: string }>)
          console.error(`pg ${row.ms} ms ${row.calls} calls: ${row.query}`);
      }
      for (const p of processes.filter((p) => p.role !== 'web')) {
        const failures = new Map<string, number>();
        for (const l of readFileSync(p.logFile, 'utf8')
          .split('\n')
          .filter((l) => l.includes('"msg":"job failed"'))) {
          const err = String((JSON.parse(l) as { err?: string }).err).slice(0, 160);
          failures.set(err, (failures.get(err) ?? 0) + 1);
        }
        if (failures.size) console.error(`${p.role} job failures: ${[...failures].map(([e, n]) => `${n}× ${e}`).join(' | ')}`);
        const metrics = await fetch(p.metricsUrl).then(
          (r) => r.text(),
          () => '',
        );
        console.error(
          `${p.role} jobs: ${metrics
            .split('\n')
            .filter((l) => l.startsWith('job_duration_seconds_count'))
            .join(' · ')}`,
        );
      }
    }
    const firstArrival = new Map<string, number>();
    for (const d of destination.received) if (!firstArrival.has(d.eventId)) firstArrival.set(d.eventId, d.receivedAt);
    const backlogArrivals = committedBeforeReturn.map((id) => firstArrival.get(id));
    const [processed] = await db()
      .select({
        left: sql<number>`count(*) filter (where ${events.dispatchedAt} is null)::int`,
        last: sql<string | Date | null>`max(${events.dispatchedAt})`,
      })
      .from(events)
      .where(inArray(events.id, committedBeforeReturn));
    const backlogProcessedMs = processed.left === 0 && processed.last ? Math.max(0, new Date(processed.last).getTime() - returnedAt) : null;
    const backlogDispatchedMs = backlogArrivals.every((t) => t !== undefined)
      ? Math.max(0, ...backlogArrivals.map((t) => t! - returnedAt))
      : null;
    return {
      ...trafficFigures(tally, destination, webhooks, processes),
      schedulesBackMs,
      backlogProcessedMs,
      backlogDispatchedMs,
      eventsRate: strandedEvents ? throughput(eventSamples) : null,
      deliveriesRate: strandedEvents ? throughput(deliverySamples) : null,
    };
  } finally {
    await observer?.close().catch(() => {});
    await Promise.all(processes.map((p) => endProcess(p.child, 'SIGTERM')));
    await destination.close();
    await redis.stop();
  }
}
