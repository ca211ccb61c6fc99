import { once } from 'node:events';
import { pool } from '../db/client.js';
import { allQueueNames } from '../jobs/all-jobs.js';
import { withTimeout } from '../lib/with-timeout.js';
import { getRedis, redisKey } from '../redis.js';
import type { RedisClient } from '../redis/connections.js';

/**
 * Whether a writable master answers for every hash tag this process relies on (each queue's and the
 * request path's): a write, not a PING, because a replica answers PING but refuses writes with
 * READONLY, and in a Cluster a slot whose owner is gone fails while the other masters answer.
 * The request connection does not queue commands while it connects, so it is waited for first.
 */
export async function writeToRedis(redis: RedisClient, keys: readonly string[]): Promise<void> {
  if (redis.status !== 'ready') await once(redis, 'ready');
  await Promise.all(keys.map((key) => redis.set(key, String(process.pid), 'PX', 60_000)));
}

/** A key in each hash tag of this deployment whose slot must have a writable owner. */
const healthKeys = () => [...allQueueNames.map((queue) => redisKey([queue], 'health')), redisKey(['health'])];

/**
 * `read_only`: PostgreSQL answers but refuses writes (a standby, or a primary fenced read-only during
 * a failover): the process cannot serve what it is for, so it is not ready either.
 */
export type DatabaseHealth = 'ok' | 'unreachable' | 'read_only';

export async function checkDependencies(): Promise<{ database: DatabaseHealth; redis: boolean }> {
  // Each check settles to a state whatever fails, wherever it fails (the pool or the client being
  // replaced mid-failover included): readiness answers 503, never an error.
  const [database, redis] = await Promise.all([
    settle(async (): Promise<DatabaseHealth> => {
      const [row] = await withTimeout(
        pool()<{ writable: boolean }[]>`select current_setting('transaction_read_only') = 'off' as writable`,
        2000,
      );
      return row.writable ? 'ok' : 'read_only';
    }, 'unreachable'),
    settle(async () => {
      await withTimeout(writeToRedis(getRedis(), healthKeys()), 2000);
      return true;
    }, false),
  ]);
  return { database, redis };
}

async function settle<T>(check: () => Promise<T>, failed: T): Promise<T> {
  try {
    return await check();
  } catch {
    return failed;
  }
}
