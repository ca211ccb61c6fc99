import { processConfig } from './config.js';
import {
  createRedisConnection,
  closeConnection,
  type ConnectionPurpose,
  type ConnectionSettings,
  type RedisClient,
} from './redis/connections.js';
import { bullPrefixOf, taggedKey } from './redis/key-layout.js';
import { redisTopologyOf } from './redis/topology.js';

/** The connection settings of this deployment, from the process's configuration. */
export function redisSettings(): ConnectionSettings {
  return { topology: redisTopologyOf(processConfig()), giveUpAfterMs: processConfig().REDIS_GIVE_UP_AFTER_SECONDS * 1000 };
}

/** A new connection of this deployment for `purpose` (src/redis/connections.ts). */
export function connectRedis(purpose: ConnectionPurpose): RedisClient {
  return createRedisConnection(redisSettings(), purpose);
}

/** A connection for BullMQ workers: blocking commands that never give up (the connection may). */
export function createQueueConnection(): RedisClient {
  return connectRedis('worker');
}

/** A connection for producers on the request path: fails fast instead of buffering while Redis is down. */
export function createProducerConnection(): RedisClient {
  return connectRedis('queues');
}

let shared: RedisClient | undefined;

/** The shared connection for rate limits, caches and health on the request path. */
export function getRedis(): RedisClient {
  if (!shared) {
    shared = connectRedis('request');
    // Errors surface on the commands that fail; the rate limiter fails open and logs.
    shared.on('error', () => {});
  }
  return shared;
}

export async function closeRedis(): Promise<void> {
  if (shared) {
    const conn = shared;
    shared = undefined;
    await closeConnection(conn);
  }
}

/** A key of this deployment in its own hash tag `group` (src/redis/key-layout.ts). */
export function redisKey(group: readonly string[], ...rest: string[]): string {
  return taggedKey(processConfig().QUEUE_PREFIX, group, ...rest);
}

/** BullMQ's prefix for one of this deployment's queues. */
export function queuePrefix(queueName: string): string {
  return bullPrefixOf(processConfig().QUEUE_PREFIX, queueName);
}
