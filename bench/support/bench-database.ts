import postgres from 'postgres';
import { deploymentKeysPattern } from '../../src/redis/key-layout.js';
import { useFileSettings } from '../../test/support/file-settings.js';

const adminUrl = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** An empty database `name` on the benchmark server (dropped first if it exists); returns its URL. */
export async function recreateDatabase(name: string): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * A database of its own for a benchmark run (dropped and re-created), migrated; sets DATABASE_URL
 * and a Redis prefix in this process's environment and configuration, so that the app modules use
 * them (and the processes it spawns, benchServerEnv).
 */
export async function prepareBenchDatabase(name: string): Promise<string> {
  const url = await recreateDatabase(name);
  useFileSettings({
    DATABASE_URL: url,
    QUEUE_PREFIX: `{${name}}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? 'bench',
  });
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(url);
  await dropRedisKeys(process.env.QUEUE_PREFIX!);
  return url;
}

export interface BenchTenant {
  organisationId: string;
  venueId: string;
  /** A live key with every scope and no practical rate limit. */
  key: string;
}

/** An organisation with one venue (configured like the demo when `tableCount` is given) and its key. */
export async function createBenchTenant(options: { tableCount?: number } = {}): Promise<BenchTenant> {
  const { createApiKey, createOrganisation } = await import('../../src/services/keys/key-service.js');
  const { createVenue } = await import('../../src/services/venues/venue-service.js');
  const { configureDemoVenue } = await import('../../src/services/venue-config/demo-venue.js');
  const org = await createOrganisation('Bench', false);
  const venue = await createVenue(org.id, { name: 'Bench venue', timezone: 'Europe/Rome', countryCode: 'IT' });
  if (options.tableCount !== undefined) await configureDemoVenue(org.id, venue.id, { tableCount: options.tableCount });
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 });
  return { organisationId: org.id, venueId: venue.id, key };
}

/**
 * The venue's webhook endpoint at `url` (its secret sealed already) and one automation that sends
 * each event of `eventTypes` (`reservation_created`) of the venue to it, at once and whatever the party.
 */
export async function addBenchAutomation(
  tenant: Pick<BenchTenant, 'organisationId' | 'venueId'>,
  url: string,
  sealedSecret: string,
  eventTypes = ['reservation_created'],
) {
  const { db } = await import('../../src/db/client.js');
  const { automations, webhookEndpoints } = await import('../../src/db/schema/index.js');
  await db()
    .insert(webhookEndpoints)
    .values({ ...tenant, url, currentSecret: sealedSecret, previousSecretExpiresAt: new Date() });
  await db()
    .insert(automations)
    .values({
      ...tenant,
      name: 'Bench',
      eventTypes,
      conditions: { partySizeMin: null, partySizeMax: null, sources: null },
      action: { type: 'partner_notification', url: null, endpointId: null, delayMinutes: 0 },
    });
}

/** Empties the benchmark's queues in Redis, then closes its queue, Redis and database connections. */
export async function endBenchConnections(queueNames: string[]): Promise<void> {
  const { closeQueues, getQueue } = await import('../../src/queues/queues.js');
  const { closeRedis } = await import('../../src/redis.js');
  const { pool } = await import('../../src/db/client.js');
  for (const name of queueNames)
    await getQueue(name)
      .obliterate({ force: true })
      .catch(() => {});
  await closeQueues();
  await closeRedis();
  await pool().end();
}

/**
 * The environment of the server and worker processes a benchmark spawns. Metrics are recorded, but no
 * metrics port is opened (METRICS_PORT=0): several processes of one role would otherwise want the same.
 */
export function benchServerEnv(logLevel = 'warn'): Record<string, string> {
  return {
    DATABASE_URL: process.env.DATABASE_URL!,
    QUEUE_PREFIX: process.env.QUEUE_PREFIX!,
    LOG_LEVEL: logLevel,
    ADMIN_PASSWORD: 'bench',
    METRICS_PORT: '0',
  };
}

/**
 * The keys an earlier run left under this prefix (jobs of the dropped database, fair-queue counts):
 * a run's queues start empty, as its database does.
 */
export async function dropRedisKeys(prefix: string): Promise<void> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', deploymentKeysPattern(prefix), 'COUNT', 10_000);
      if (keys.length) await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
