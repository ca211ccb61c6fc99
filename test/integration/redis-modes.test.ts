import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { closeConnection, createRedisConnection, type RedisClient } from '../../src/redis/connections.js';
import { writeToRedis } from '../../src/monitoring/health.js';
import { endAll, startRole } from '../chaos/own-processes.js';
import { startOwnReplicaPair } from '../topologies/own-redis-topologies.js';

// Servers of this file's own (a master and its replica, from the Debian package), ended by pid.
const pair = await startOwnReplicaPair();
const connections: RedisClient[] = [];
/**
 * A request-path connection, once it is ready: it queues nothing while connecting (it fails fast, as
 * a request must), so a command sent before that fails; on a loaded machine the connect took long
 * enough for the PING below to fail with "Stream isn't writeable".
 */
const connect = async (port: number) => {
  const redis = createRedisConnection({ topology: { mode: 'single', url: `redis://127.0.0.1:${port}` }, giveUpAfterMs: 0 }, 'request');
  redis.on('error', () => {});
  connections.push(redis);
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  return redis;
};
const answers = (redis: RedisClient) =>
  Promise.race([
    writeToRedis(redis, ['{health-test}:a', '{health-test:b}:b']),
    new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 2000)),
  ]).then(
    () => true,
    () => false,
  );

afterAll(async () => {
  await Promise.all(connections.map(closeConnection));
  await endAll();
});

describe('Redis health and connection loss', () => {
  it('counts a writable master as available and a replica, which answers PING, as unavailable', async () => {
    const master = await connect(pair.master.port);
    const replica = await connect(pair.replica.port);
    expect(await answers(master)).toBe(true);
    expect(await replica.ping()).toBe('PONG');
    expect(await answers(replica)).toBe(false);
  });

  it('a worker whose queue connection gives up exits non-zero', async () => {
    const worker = await startRole('events', {
      REDIS_URL: `redis://127.0.0.1:${pair.master.port}`,
      REDIS_GIVE_UP_AFTER_SECONDS: '1',
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}lost`,
    });
    const exited = new Promise<number | null>((resolve) => worker.child.once('exit', (code) => resolve(code)));
    await pair.master.kill();
    expect(await exited).toBe(1);
    expect(readFileSync(worker.logFile, 'utf8')).toContain('queue connection lost for good');
  }, 60_000);
});
