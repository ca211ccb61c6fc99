import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import type { RedisTopology } from './topology.js';

/** A connection of any mode: one server or a Sentinel-followed master (Redis), or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * What a connection is for, which decides how it behaves while Redis is away:
 * - `worker`: a BullMQ worker's (blocking commands): commands wait for the connection, never give
 *   up on their own; the connection itself gives up after `giveUpAfterMs` without Redis (it ends,
 *   and the worker's process exits for its supervisor to restart it).
 * - `queues`: producers (enqueueing, fair-share, the sweeper): fail fast instead of buffering.
 * - `request`: rate limits, caches and health on the request path: fail fast, within 250 ms.
 * - `slots`: destination slots of the webhook workers: no command timeout (a slot whose answer timed
 *   out would be taken without anyone knowing), one reconnection attempt per command.
 */
export type ConnectionPurpose = 'worker' | 'queues' | 'request' | 'slots';

export interface ConnectionSettings {
  topology: RedisTopology;
  /** REDIS_GIVE_UP_AFTER_SECONDS in ms (0: never): how long a worker's connection keeps trying. */
  giveUpAfterMs: number;
}

const purposeOptions: Record<ConnectionPurpose, { redis: RedisOptions; offlineQueue: boolean; autoPipelining: boolean }> = {
  worker: { redis: { maxRetriesPerRequest: null, enableReadyCheck: false }, offlineQueue: true, autoPipelining: false },
  queues: { redis: { maxRetriesPerRequest: 1 }, offlineQueue: false, autoPipelining: false },
  // Commands issued in the same tick (one per concurrent request) leave in one write.
  request: { redis: { maxRetriesPerRequest: 1, commandTimeout: 250 }, offlineQueue: false, autoPipelining: true },
  // Commands wait while it connects; the commands of the many jobs running at once leave in one write per tick.
  slots: { redis: { maxRetriesPerRequest: 1 }, offlineQueue: true, autoPipelining: true },
};

/** Longest wait between two reconnection attempts (ms). */
const maxReconnectDelayMs = 2000;

/**
 * The wait before reconnection attempt `times` (1, 2, …): 200 ms more each time up to 2 s; null
 * (give up) once the waits so far add up to `giveUpAfterMs` (0: never give up). Counted in attempts,
 * not from a clock, so that a duplicated connection (BullMQ's blocking one) follows the same rule.
 */
export function reconnectDelay(times: number, giveUpAfterMs: number): number | null {
  const delay = (n: number) => Math.min(n * 200, maxReconnectDelayMs);
  if (giveUpAfterMs > 0) {
    let waited = 0;
    for (let n = 1; n < times; n++) waited += delay(n);
    if (waited >= giveUpAfterMs) return null;
  }
  return delay(times);
}

/**
 * A replica answers writes with READONLY: after a Sentinel failover, a connection still on the old
 * master (now a replica) reconnects, which asks Sentinel for the new master, and resends the command.
 */
export function reconnectOnReadonly(err: Error): 2 | false {
  return err.message.startsWith('READONLY') ? 2 : false;
}

/**
 * The one way this project opens a Redis connection: every role and every purpose (BullMQ queues and
 * workers, rate limits, destination slots, fair-share, Bull Board, health, the CLI) comes through
 * here, so that each follows the deployment's mode. Built from the values given, never from the
 * global configuration.
 */
export function createRedisConnection({ topology, giveUpAfterMs }: ConnectionSettings, purpose: ConnectionPurpose): RedisClient {
  const { redis: purposeRedis, offlineQueue, autoPipelining } = purposeOptions[purpose];
  const retry = (times: number) => reconnectDelay(times, purpose === 'worker' ? giveUpAfterMs : 0);
  const common: RedisOptions = { ...purposeRedis, reconnectOnError: reconnectOnReadonly };
  if (topology.mode === 'cluster') {
    const options: ClusterOptions = {
      redisOptions: { ...common, password: topology.password },
      enableOfflineQueue: offlineQueue,
      enableAutoPipelining: autoPipelining,
      enableReadyCheck: purpose !== 'worker',
      clusterRetryStrategy: retry,
    };
    return new Cluster(topology.nodes, options);
  }
  const options: RedisOptions = { ...common, enableOfflineQueue: offlineQueue, enableAutoPipelining: autoPipelining, retryStrategy: retry };
  if (topology.mode === 'sentinel') {
    return new Redis({
      ...options,
      sentinels: topology.sentinels,
      name: topology.masterName,
      sentinelPassword: topology.sentinelPassword,
      password: topology.password,
      // Subscribes to the sentinels' +switch-master: a failover moves the connection at once,
      // rather than when the old master's socket breaks or answers READONLY.
      failoverDetector: true,
    });
  }
  return new Redis(topology.url, options);
}

/** Closes a connection politely, or drops it when Redis does not answer. */
export async function closeConnection(redis: RedisClient): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
