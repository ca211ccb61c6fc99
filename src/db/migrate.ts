import path from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { projectRoot } from '../project-root.js';
import { serverOptionsOf } from './primary-host.js';

const migrationsFolder = path.join(projectRoot, 'drizzle');

/**
 * Applies pending migrations (give it DATABASE_DIRECT_URL). Two processes starting together must not
 * apply the same migration twice: one connection holds a transaction-scoped advisory lock while the
 * other applies them. The lock ends with that transaction, whatever happens: committed after the
 * migrations, rolled back on an error, or dropped with the connection by PostgreSQL (or by a pooler,
 * which keeps a transaction on one server connection). A session lock could outlive its holder
 * behind a transaction pooler, released on another server connection ("you don't own a lock").
 */
export async function runMigrations(databaseUrl: string): Promise<void> {
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
    await conn.end();
  }
}
