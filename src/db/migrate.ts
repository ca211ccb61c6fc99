import path from 'node:path';
import { drizzle } from 'drizzle-orm/postgres-js';
import { migrate } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { projectRoot } from '../project-root.js';

const migrationsFolder = path.join(projectRoot, 'drizzle');

/** Applies pending migrations over a dedicated single connection (the advisory lock of drizzle's migrator needs one session). */
export async function runMigrations(databaseUrl: string): Promise<void> {
  const conn = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    // Two processes starting together must not apply the same migration twice.
    await conn`select pg_advisory_lock(7234001)`;
    await migrate(drizzle(conn), { migrationsFolder });
    await conn`select pg_advisory_unlock(7234001)`;
  } finally {
    await conn.end();
  }
}
