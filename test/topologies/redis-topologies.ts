// The Redis topologies under booking load, with webhooks to a local receiver and the platform's
// roles as separate processes (web, worker-events, worker-webhooks), none restarted by hand:
// - sentinel: a master, its replica and three Sentinels; the master SIGKILLed mid-traffic.
// - cluster: three masters; the slots of the events and webhook-delivery queues migrated mid-traffic.
import { readFileSync } from 'node:fs';
import { allQueueNames } from '../../src/jobs/all-jobs.js';
import { bullPrefixOf, deploymentKeysPattern } from '../../src/redis/key-layout.js';
import {
  awaitWebhooks,
  bookSteadily,
  chaosQueuePrefix,
  createChaosTenant,
  describeTraffic,
  routeBookingsTo,
  seconds,
  sleep,
  startDestination,
  Tally,
  trafficFigures,
  type Destination,
  type TrafficFigures,
} from '../chaos/chaos-world.js';
import type { RoleProcess } from '../chaos/own-processes.js';
import { keysPerMaster, migrateSlot, slotOf, startOwnCluster, startOwnSentinelGroup } from './own-redis-topologies.js';
import { startRoles } from './topology-load.js';

export interface TopologyOptions {
  databaseUrl: string;
  bookingsPerSecond?: number;
  /** Traffic before the fault and after it (ms). */
  beforeMs?: number;
  afterMs?: number;
  /** Give up waiting for the webhooks this long after the traffic stopped (ms). */
  deadlineMs?: number;
}

/** Lines of the processes' logs that mention a cluster redirection or a replica's refusal, by kind. */
function redisErrorsLogged(processes: RoleProcess[]): string {
  const logs = processes.map((p) => readFileSync(p.logFile, 'utf8')).join('\n');
  return ['MOVED', 'ASK', 'TRYAGAIN', 'READONLY', 'CLUSTERDOWN', 'ECONNREFUSED']
    .map((kind) => `${kind} ${logs.split(kind).length - 1}`)
    .join(', ');
}

/** Polls /readyz every 200 ms until stopped: the spans during which it did not answer 200. */
function watchReadiness(url: string): { stop: () => Promise<Array<{ from: number; to: number }>> } {
  const spans: Array<{ from: number; to: number }> = [];
  let down: number | null = null;
  let watching = true;
  const loop = (async () => {
    while (watching) {
      const at = Date.now();
      const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
        (r) => r.ok,
        () => false,
      );
      if (!ok && down === null) down = at;
      if (ok && down !== null) {
        spans.push({ from: down, to: at });
        down = null;
      }
      await sleep(200);
    }
    if (down !== null) spans.push({ from: down, to: Number.POSITIVE_INFINITY });
  })();
  return {
    stop: async () => {
      watching = false;
      await loop;
      return spans;
    },
  };
}

/**
 * The longest time without a webhook from `from` to the last webhook, or to now while some are
 * still missing (ms): how long deliveries stood still.
 */
function longestDeliveryGap(destination: Destination, missing: number, from: number): number {
  const times = destination.received.map((d) => d.receivedAt);
  const until = missing ? Date.now() : Math.max(from, ...times);
  const marks = [from, ...times.filter((t) => t >= from).sort((a, b) => a - b), until];
  return Math.max(...marks.slice(1).map((t, i) => t - marks[i]));
}

export interface SentinelFigures extends TrafficFigures {
  /** From the master's SIGKILL until Sentinel named the replica master. */
  promotedMs: number;
  /** /readyz answering other than 200 after the kill, in total. */
  readyzOutageMs: number;
  /** /readyz answered 200 again by the end. */
  readyAgain: boolean;
  /** The longest stretch without a webhook from the kill on. */
  deliveryGapMs: number;
  newMasterIsReplica: boolean;
  errorsLogged: string;
}

export async function runSentinelFailover(options: TopologyOptions): Promise<SentinelFigures> {
  const { databaseUrl, bookingsPerSecond = 5, beforeMs = 10_000, afterMs = 20_000, deadlineMs = 120_000 } = options;
  const group = await startOwnSentinelGroup();
  const processes = await startRoles(databaseUrl, { REDIS_SENTINELS: group.sentinelList, REDIS_SENTINEL_MASTER: group.masterName });
  const web = processes[0];
  const destination = await startDestination();
  try {
    const tenant = await createChaosTenant();
    await routeBookingsTo(web.url!, tenant, destination.url);
    const tally = new Tally();
    let stopAt = Number.POSITIVE_INFINITY;
    const readiness = watchReadiness(web.url!);
    const traffic = bookSteadily(web.url!, tenant, bookingsPerSecond, () => Date.now() > stopAt, tally);
    await sleep(beforeMs);
    const killedAt = Date.now();
    await group.master.kill();
    stopAt = Date.now() + afterMs;
    let promotedMs = Number.POSITIVE_INFINITY;
    while (Date.now() < stopAt) {
      if (!Number.isFinite(promotedMs) && (await group.currentMasterPort().catch(() => 0)) === group.replica.port)
        promotedMs = Date.now() - killedAt;
      await sleep(200);
    }
    await traffic;
    const webhooks = await awaitWebhooks(destination, tenant.venueId, Date.now() + deadlineMs);
    const spans = (await readiness.stop()).filter((s) => s.to >= killedAt);
    return {
      ...trafficFigures(tally, destination, webhooks, processes),
      promotedMs,
      readyzOutageMs: spans.reduce((sum, s) => sum + (s.to - Math.max(s.from, killedAt)), 0),
      readyAgain: spans.every((s) => Number.isFinite(s.to)),
      deliveryGapMs: longestDeliveryGap(destination, webhooks.missing, killedAt),
      newMasterIsReplica: (await group.currentMasterPort()) === group.replica.port,
      errorsLogged: redisErrorsLogged(processes),
    };
  } finally {
    await destination.close();
  }
}

export function describeSentinelFailover(f: SentinelFigures): string {
  return (
    `${describeTraffic(f)} · replica promoted ${seconds(f.promotedMs)} after the master's SIGKILL · /readyz not ok for ${seconds(f.readyzOutageMs)}` +
    `${f.readyAgain ? '' : ' (still not ok at the end)'} · longest stretch without a webhook ${seconds(f.deliveryGapMs)} · logged: ${f.errorsLogged} · processes exited ${f.exitedProcesses}`
  );
}

export interface ClusterFigures extends TrafficFigures {
  /** Keys of the deployment on each master after the run, and of its BullMQ queues alone. */
  keysPerMaster: number[];
  queueKeysPerMaster: number[];
  migrations: Array<{ queue: string; slot: number; from: number; to: number; keys: number; ms: number }>;
  deliveryGapMs: number;
  errorsLogged: string;
  /** After the run, one master SIGKILLed (no replica takes its slots): how long until /readyz said 503, null if it never did within 20 s. */
  readyzNoticedLostMasterMs: number | null;
}

/** Polls /readyz until it answers 503 (within `limitMs`): how long that took, or null. */
async function msUntilUnready(url: string, limitMs: number): Promise<number | null> {
  const began = Date.now();
  while (Date.now() - began < limitMs) {
    const status = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(3000) }).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 503) return Date.now() - began;
    await sleep(200);
  }
  return null;
}

export async function runClusterMigration(options: TopologyOptions): Promise<ClusterFigures> {
  const { databaseUrl, bookingsPerSecond = 5, beforeMs = 10_000, afterMs = 20_000, deadlineMs = 120_000 } = options;
  const cluster = await startOwnCluster(3);
  const processes = await startRoles(databaseUrl, { REDIS_CLUSTER_NODES: cluster.seeds });
  const web = processes[0];
  const destination = await startDestination();
  try {
    const tenant = await createChaosTenant();
    await routeBookingsTo(web.url!, tenant, destination.url);
    const tally = new Tally();
    let stopAt = Number.POSITIVE_INFINITY;
    const traffic = bookSteadily(web.url!, tenant, bookingsPerSecond, () => Date.now() > stopAt, tally);
    await sleep(beforeMs);
    const migratedFrom = Date.now();
    stopAt = Date.now() + afterMs;
    const migrations: ClusterFigures['migrations'] = [];
    // The two busiest queues: every booking passes through both.
    for (const queue of ['events', 'webhook-delivery']) {
      const slot = await slotOf(cluster, `${bullPrefixOf(chaosQueuePrefix, queue)}:${queue}:wait`);
      const began = Date.now();
      const moved = await migrateSlot(cluster, slot);
      migrations.push({ queue, slot, ...moved, ms: Date.now() - began });
      await sleep(2000);
    }
    await traffic;
    const webhooks = await awaitWebhooks(destination, tenant.venueId, Date.now() + deadlineMs);
    const figures = {
      ...trafficFigures(tally, destination, webhooks, processes),
      keysPerMaster: await keysPerMaster(cluster, [deploymentKeysPattern(chaosQueuePrefix)]),
      queueKeysPerMaster: await keysPerMaster(
        cluster,
        allQueueNames.map((queue) => `${bullPrefixOf(chaosQueuePrefix, queue)}:*`),
      ),
      migrations,
      deliveryGapMs: longestDeliveryGap(destination, webhooks.missing, migratedFrom),
      errorsLogged: redisErrorsLogged(processes),
    };
    await cluster.masters[0].kill();
    return { ...figures, readyzNoticedLostMasterMs: await msUntilUnready(web.url!, 20_000) };
  } finally {
    await destination.close();
  }
}

export function describeClusterMigration(f: ClusterFigures): string {
  const moved = f.migrations.map((m) => `${m.queue} slot ${m.slot} ${m.from}→${m.to} (${m.keys} keys, ${m.ms} ms)`).join(', ');
  return (
    `${describeTraffic(f)} · keys per master ${f.keysPerMaster.join('/')} (of queues ${f.queueKeysPerMaster.join('/')}) · migrated ${moved} · longest stretch without a webhook ${seconds(f.deliveryGapMs)}` +
    ` · logged: ${f.errorsLogged} · processes exited ${f.exitedProcesses}` +
    ` · then a master SIGKILLed: /readyz 503 ${f.readyzNoticedLostMasterMs === null ? 'never (20 s)' : `after ${seconds(f.readyzNoticedLostMasterMs)}`}`
  );
}
