import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { Redis } from 'ioredis';

const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** One database and one Redis key prefix per run, so that runs never collide. */
export default async function setup() {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `floorline_test_${runId}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${database}"`);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  Object.assign(process.env, {
    NODE_ENV: 'test',
    DATABASE_URL: url.toString(),
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: `{t${runId}}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
    ADMIN_PASSWORD: 'test-admin-password',
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
    SECRETS_KEY: 'test-secrets-key-0123456789',
    // Worker processes the tests spawn open no metrics port: parallel runs on one machine would collide.
    METRICS_PORT: '0',
  });
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(url.toString());

  return async () => {
    await admin.unsafe(`drop database if exists "${database}" with (force)`);
    await admin.end();
    const redis = new Redis(redisUrl);
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `{t${runId}}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
    await redis.quit();
  };
}
