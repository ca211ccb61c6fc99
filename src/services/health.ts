import { once } from 'node:events';
import { sql } from '../db/client.js';
import { getRedis } from '../redis.js';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}

/** The request connection does not queue commands while it connects, so wait for it first. */
async function pingRedis(): Promise<unknown> {
  const redis = getRedis();
  if (redis.status !== 'ready') await once(redis, 'ready');
  return redis.ping();
}

export async function checkDependencies(): Promise<{ database: boolean; redis: boolean }> {
  const [database, redis] = await Promise.all([
    withTimeout(sql`select 1`, 2000).then(() => true, () => false),
    withTimeout(pingRedis(), 2000).then(() => true, () => false),
  ]);
  return { database, redis };
}
