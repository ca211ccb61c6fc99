import { sql } from '../db/client.js';
import { getRedis } from '../redis.js';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}

export async function checkDependencies(): Promise<{ database: boolean; redis: boolean }> {
  const [database, redis] = await Promise.all([
    withTimeout(sql`select 1`, 2000).then(() => true, () => false),
    withTimeout(getRedis().ping(), 2000).then(() => true, () => false),
  ]);
  return { database, redis };
}
