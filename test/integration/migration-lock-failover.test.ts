import postgres from 'postgres';
import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMigrations } from '../../src/db/migrate.js';
import { eventually } from '../support/eventually.js';
import { ownPostgresAvailable, startOwnPostgres, startOwnStandby, type OwnPostgres } from '../support/own-postgres.js';

// A primary (migrated) and its streaming standby of this file alone. Two processes' start-ups run the
// migrations through both hosts while the primary dies: one holds the migration lock, the other waits
// for it. Both must finish on the promoted standby instead of failing the start-up.
let primary: OwnPostgres;
let standby: OwnPostgres;
const migrationFiles = readdirSync('drizzle').filter((f) => f.endsWith('.sql')).length;

beforeAll(async () => {
  if (!ownPostgresAvailable) return;
  primary = await startOwnPostgres();
  await runMigrations(primary.url);
  standby = await startOwnStandby(primary);
}, 60_000);

afterAll(async () => {
  await primary?.destroy();
  await standby?.destroy();
});

describe.skipIf(!ownPostgresAvailable)('the primary dies during the migrations at start-up', () => {
  it('the process holding the migration lock and the one waiting for it both finish on the new primary', async () => {
    const hosts = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`;
    // Holds drizzle's table so that the holder of the migration lock stays inside it, reading the table.
    const blocker = postgres(primary.url, { max: 1, onnotice: () => {} });
    await blocker`begin`;
    await blocker`lock table drizzle.__drizzle_migrations in access exclusive mode`;
    const started = [runMigrations(hosts), runMigrations(hosts)].map((p) =>
      p.then(
        () => 'migrated',
        (err: Error) => `failed: ${err.message}`,
      ),
    );
    const admin = postgres(primary.url, { max: 1, onnotice: () => {} });
    try {
      // One waits on drizzle's table (holding the advisory lock), the other on the advisory lock.
      const waits = await eventually(
        async () => {
          const rows = await admin<{ wait_event: string }[]>`
            select wait_event from pg_stat_activity where wait_event_type = 'Lock' and pid <> pg_backend_pid() order by 1`;
          return rows.length === 2 && rows.map((r) => r.wait_event);
        },
        15_000,
        'one migration to hold the lock and the other to wait for it',
      );
      expect(waits).toEqual(['advisory', 'relation']);
    } finally {
      await admin.end({ timeout: 0 });
    }

    await primary.stop('immediate');
    await blocker.end({ timeout: 0 });
    await standby.promote();
    expect(await Promise.all(started)).toEqual(['migrated', 'migrated']);

    const promoted = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      const [{ applied }] = await promoted<{ applied: number }[]>`select count(*)::int as applied from drizzle.__drizzle_migrations`;
      expect(applied).toBe(migrationFiles);
      const [{ writable }] = await promoted<{ writable: boolean }[]>`select not pg_is_in_recovery() as writable`;
      expect(writable).toBe(true);
    } finally {
      await promoted.end();
    }
  }, 60_000);
});
