import { Redis, type RedisOptions } from 'ioredis';
import { config } from './config.js';

/** A connection for BullMQ workers: blocking commands that never give up. */
export function createQueueConnection(): Redis {
  return new Redis(config.REDIS_URL, { maxRetriesPerRequest: null, enableReadyCheck: false });
}

/** A connection for producers on the request path: fails fast instead of buffering while Redis is down. */
export function createProducerConnection(): Redis {
  return new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
}

const requestOptions: RedisOptions = {
  // Request-path commands must fail fast when Redis is down rather than queue up.
  enableOfflineQueue: false,
  maxRetriesPerRequest: 1,
  commandTimeout: 250,
  // Commands issued in the same tick (one per concurrent request) leave in one write.
  enableAutoPipelining: true,
  retryStrategy: (times) => Math.min(times * 200, 2000),
};

let shared: Redis | undefined;

/** The shared connection for rate limits and caches on the request path. */
export function getRedis(): Redis {
  if (!shared) {
    shared = new Redis(config.REDIS_URL, requestOptions);
    // Errors surface on the commands that fail; the rate limiter fails open and logs.
    shared.on('error', () => {});
  }
  return shared;
}

export async function closeRedis(): Promise<void> {
  if (shared) {
    const conn = shared;
    shared = undefined;
    await conn.quit().catch(() => conn.disconnect());
  }
}

/** Every Redis key of this deployment starts with the queue prefix, so that test runs never collide. */
export function redisKey(...parts: string[]): string {
  return [config.QUEUE_PREFIX, ...parts].join(':');
}
