import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { Redis } from 'ioredis';
import { deploymentKeysPattern, queuePrefixOfKey } from '../../src/redis/key-layout.js';
import { templateDatabaseOf } from './own-database.js';
import { compiledEntry } from './entry-process.js';

const adminUrl = process.env.TEST_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * One database and one Redis key prefix per run, so that runs never collide. The migrations run once,
 * on the run's template database (templateDatabaseOf), which the run's database and each file's own
 * (test/support/own-database.ts) are copies of: a copy takes a fraction of the migrations' time.
 */
export default async function setup() {
  const runId = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const database = `floorline_test_${runId}`;
  const template = templateDatabaseOf(database);
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${template}"`);
  const url = new URL(adminUrl);
  const templateUrl = new URL(adminUrl);
  templateUrl.pathname = `/${template}`;
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
    // Every test client calls from 127.0.0.1, and many files try bad keys on purpose: the throttle
    // of failed authentications per address is tested on its own (client-address.test.ts).
    AUTH_FAILURES_PER_MINUTE: '100000',
  });
  const { runMigrations } = await import('../../src/db/migrate.js');
  await Promise.all([
    runMigrations(templateUrl.toString()).then(() => admin.unsafe(`create database "${database}" template "${template}"`)),
    // The entry points that tests run as processes of their own are the compiled ones (entry-process.ts).
    promisify(execFile)(process.execPath, ['scripts/build.mjs', '--if-stale']),
  ]);

  return async () => {
    const redis = new Redis(redisUrl);
    let failure: Error | undefined;
    try {
      failure = await checkRun(database, await runPrefixes(redis, `{t${runId}}`));
      if (failure) await describePendingDeliveries(url.toString());
    } finally {
      await admin.unsafe(`drop database if exists "${database}" with (force)`);
      await admin.unsafe(`drop database if exists "${template}" with (force)`);
      await admin.end();
      await scanKeys(redis, deploymentKeysPattern(`{t${runId}}`), async (keys) => {
        await redis.del(...keys);
      });
      await redis.quit();
    }
    if (failure) {
      // Vitest only logs an error thrown here: the exit code says it too.
      process.exitCode = 1;
      throw failure;
    }
  };
}

/**
 * The run's pending deliveries, one line each, printed when the check after the suite fails: which
 * test left them (its venue's name, its automation's) and how late they are, before the database goes.
 */
async function describePendingDeliveries(databaseUrl: string): Promise<void> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<Record<string, unknown>[]>`
      select d.id, d.event_type, d.attempts, d.created_at, d.next_attempt_at, d.updated_at, v.name as venue, a.name as automation, a.created_at as automation_created_at, e.created_at as event_created_at
      from webhook_deliveries d join venues v on v.id = d.venue_id join events e on e.id = d.event_id
      left join automations a on a.id = d.automation_id
      where d.status = 'pending' order by d.next_attempt_at limit 20`;
    for (const row of rows) console.log(`pending delivery after the suite: ${JSON.stringify(row)}`);
  } finally {
    await sql.end();
  }
}

/** Every queue prefix of the run found in Redis: the run's own, and those the files made of it (`{t…}wh`, whose keys are `{t…wh:…}`). */
async function runPrefixes(redis: Redis, runPrefix: string): Promise<string[]> {
  const prefixes = new Set([runPrefix]);
  await scanKeys(redis, deploymentKeysPattern(runPrefix), (keys) => {
    for (const key of keys) {
      const prefix = queuePrefixOfKey(key);
      if (prefix) prefixes.add(prefix);
    }
  });
  return [...prefixes];
}

/** Calls `handle` with each non-empty batch of the keys matching `pattern`. */
async function scanKeys(redis: Redis, pattern: string, handle: (keys: string[]) => unknown): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await handle(keys);
  } while (cursor !== '0');
}

/**
 * The invariant check of `npm run cli -- check` (the CLI itself) on the whole run's database, its
 * delivery jobs looked up under every prefix of the run. Prints its counts on one line; an error to
 * fail the run when any is not zero, or when the check cannot run.
 */
async function checkRun(database: string, prefixes: string[]): Promise<Error | undefined> {
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)(
      process.execPath,
      [compiledEntry('src/cli/main.ts'), 'check', '--json', '--queue-prefixes', prefixes.join(',')],
      { env: process.env, timeout: 60_000 },
    ));
  } catch (err) {
    // Exit code 2: violations, still printed as JSON.
    stdout = (err as { stdout?: string }).stdout ?? '';
    if ((err as { code?: unknown }).code !== 2)
      return new Error(`the invariant check after the suite did not run: ${(err as Error).message}`);
  }
  const counts = JSON.parse(stdout) as Record<string, number>;
  const line = Object.entries(counts)
    .map(([name, n]) => `${name}=${n}`)
    .join(' ');
  console.log(`Invariant check after the suite (${database}, ${prefixes.length} queue prefixes): ${line}`);
  if (counts.violations) return new Error(`the invariant check after the suite found ${counts.violations} violation(s): ${line}`);
  return undefined;
}
