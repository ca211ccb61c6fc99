// Scenario: the PostgreSQL cluster (the scenario's own) stopped for 15 s while 8 clients book and 4
// read. Every process must stay up, the API must answer only 2xx/4xx/503 (never 500, never a hang),
// no job may be discarded because of the outage, and everything resumes by itself.
import { Queue } from 'bullmq';
import { and, eq } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { webhookDeliveries } from '../../src/db/schema/index.js';
import { eventJob } from '../../src/jobs/event-job.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { bullPrefixOf } from '../../src/redis/key-layout.js';
import {
  awaitWebhooks,
  bookingBody,
  callApi,
  chaosQueuePrefix,
  createChaosTenant,
  describeTraffic,
  roleEnv,
  routeBookingsTo,
  seconds,
  sleep,
  startDestination,
  Tally,
  trafficFigures,
  type TrafficFigures,
} from './chaos-world.js';
import type { OwnPostgres } from '../support/own-postgres.js';
import { endProcess, startOwnRedis, startRole, type RoleProcess } from './own-processes.js';

export interface PostgresOutageOptions {
  /** The scenario's own cluster, migrated; DATABASE_URL of this process must be its `url`. */
  cluster: OwnPostgres;
  writers?: number;
  readers?: number;
  beforeMs?: number;
  outageMs?: number;
  afterMs?: number;
  mode?: 'fast' | 'immediate';
  deadlineMs?: number;
}

export interface PostgresOutageFigures extends TrafficFigures {
  /** Answers other than 2xx, 4xx and 503: 500s, resets, hangs past 10 s. */
  unexpected: number;
  /** Jobs failed for good (BullMQ failed sets) and deliveries discarded: none may come from the outage. */
  discarded: number;
  /** From PostgreSQL's return to the first booking answered 201. */
  recoveryMs: number | null;
}

export function describePostgresOutage(f: PostgresOutageFigures): string {
  return (
    `${describeTraffic(f)} · other than 2xx/4xx/503: ${f.unexpected} · jobs discarded ${f.discarded} · first 201 ${f.recoveryMs === null ? 'never' : seconds(f.recoveryMs)} after PostgreSQL returned · ` +
    `processes exited ${f.exitedProcesses}`
  );
}

export async function runPostgresOutage(options: PostgresOutageOptions): Promise<PostgresOutageFigures> {
  const {
    cluster,
    writers = 8,
    readers = 4,
    beforeMs = 8_000,
    outageMs = 15_000,
    afterMs = 15_000,
    mode = 'fast',
    deadlineMs = 90_000,
  } = options;
  const redis = await startOwnRedis();
  const env = roleEnv(cluster.url, redis.url);
  const processes: RoleProcess[] = [];
  const destination = await startDestination();
  try {
    processes.push(
      ...(await Promise.all([startRole('web', env), startRole('events', env), startRole('webhooks', env), startRole('timers', env)])),
    );
    const web = processes[0].url!;
    const tenant = await createChaosTenant();
    await routeBookingsTo(web, tenant, destination.url);

    const tally = new Tally();
    let stop = false;
    let next = 0;
    let returnedAt = 0;
    let firstBookingAfterReturn: number | null = null;
    const writer = async () => {
      while (!stop) {
        const answer = await callApi(web, tenant.key, 'POST', '/reservations', bookingBody(tenant.venueId, next++), 10_000);
        tally.add(answer);
        if (answer.status === 201 && returnedAt && firstBookingAfterReturn === null) firstBookingAfterReturn = Date.now() - returnedAt;
        // A client backs off a little after a 503, as Retry-After asks.
        if (answer.status !== 201) await sleep(200);
      }
    };
    const reader = async (i: number) => {
      while (!stop) {
        const path = i % 2 ? `/reservations?venueId=${tenant.venueId}&limit=20` : `/venues/${tenant.venueId}`;
        const answer = await callApi(web, tenant.key, 'GET', path, undefined, 10_000);
        tally.add(answer);
        if (answer.status !== 200) await sleep(200);
      }
    };
    const clients = [...Array.from({ length: writers }, writer), ...Array.from({ length: readers }, (_, i) => reader(i))];
    await sleep(beforeMs);
    await cluster.stop(mode);
    await sleep(outageMs);
    await cluster.start();
    returnedAt = Date.now();
    await sleep(afterMs);
    stop = true;
    await Promise.all(clients);

    const webhooks = await awaitWebhooks(destination, tenant.venueId, Date.now() + deadlineMs);
    const failedJobs = async (name: string) => {
      const queue = new Queue(name, { connection: { host: '127.0.0.1', port: redis.port }, prefix: bullPrefixOf(chaosQueuePrefix, name) });
      try {
        return await queue.getFailedCount();
      } finally {
        await queue.close();
      }
    };
    const discardedRows = await db()
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.venueId, tenant.venueId), eq(webhookDeliveries.status, 'discarded')));
    return {
      ...trafficFigures(tally, destination, webhooks, processes),
      unexpected: tally.count((s) => typeof s !== 'number' || !((s >= 200 && s < 300) || (s >= 400 && s < 500) || s === 503)),
      discarded: (await failedJobs(eventJob.queueName)) + (await failedJobs(webhookDeliveryJob.queueName)) + discardedRows.length,
      recoveryMs: firstBookingAfterReturn,
    };
  } finally {
    await Promise.all(processes.map((p) => endProcess(p.child, 'SIGTERM')));
    await destination.close();
    await redis.stop();
  }
}
