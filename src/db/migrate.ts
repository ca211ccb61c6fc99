import path from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import pRetry from 'p-retry';
import postgres from 'postgres';
import { isConnectionError } from '../lib/connection-errors.js';
import { projectRoot } from '../project-root.js';
import { serverOptionsOf } from './primary-host.js';

const migrationsFolder = path.join(projectRoot, 'drizzle');

/**
 * How long migrations are tried again while PostgreSQL is unavailable: a primary lost during them
 * (the lock held or waited for) is replaced once Patroni's leader key expires (ttl, 30 s by default)
 * and the standby promoted. Past this the start-up fails, as it does for any other error.
 */
const retryForMs = 60_000;
const retryEveryMs = 1000;

/**
 * Applies pending migrations (give it DATABASE_DIRECT_URL). Two processes starting together must not
 * apply the same migration twice: one connection holds a transaction-scoped advisory lock while the
 * other applies them. The lock ends with that transaction, whatever happens: committed after the
 * migrations, rolled back on an error, or dropped with the connection by PostgreSQL (or by a pooler,
 * which keeps a transaction on one server connection). A session lock could outlive its holder
 * behind a transaction pooler, released on another server connection ("you don't own a lock").
 *
 * A connection error (the primary died while this process held or waited for the lock) starts them
 * again, on the new primary with several hosts in the URL: its lock is free (the old one ended with
 * the old server), and what a synchronous standby received of the migrations is recorded in
 * drizzle's table, so only what had not committed runs again.
 */
export async function runMigrations(databaseUrl: string): Promise<void> {
  await pRetry(() => migrateOnce(databaseUrl), {
    retries: retryForMs / retryEveryMs,
    minTimeout: retryEveryMs,
    factor: 1,
    maxRetryTime: retryForMs,
    shouldRetry: ({ error }) => isConnectionError(error),
  });
}

async function migrateOnce(databaseUrl: string): Promise<void> {
  const server = serverOptionsOf(databaseUrl);
  const conn = postgres(server.url, {
    max: 2,
    onnotice: () => {},
    prepare: false,
    ...server.driver,
  });
  try {
    await conn.begin(async (lock) => {
      await lock`select pg_advisory_xact_lock(7234001)`;
      await migrate(drizzle({ client: conn }), { migrationsFolder });
    });
  } finally {
    await conn.end({ timeout: 0 });
  }
}
