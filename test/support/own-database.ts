import postgres from 'postgres';

export interface OwnDatabase {
  url: string;
  drop: () => Promise<void>;
}

/**
 * A migrated database of one test file alone, beside the run's on the same server: for a file
 * whose sweepers and workers act on every row of a database, which must neither touch the rows of
 * files running at the same time nor count them. Call it in `vi.hoisted` and set DATABASE_URL to
 * its url there, before the app modules are loaded; drop it after closing the pool.
 */
export async function createOwnDatabase(suffix: string): Promise<OwnDatabase> {
  const runUrl = new URL(process.env.DATABASE_URL!);
  const name = `${runUrl.pathname.slice(1)}_${suffix}`;
  const adminUrl = new URL(runUrl);
  adminUrl.pathname = '/postgres';
  const admin = () => postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
  const creator = admin();
  await creator.unsafe(`create database "${name}"`);
  await creator.end();
  const url = new URL(runUrl);
  url.pathname = `/${name}`;
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(url.toString());
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = admin();
      await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
}
