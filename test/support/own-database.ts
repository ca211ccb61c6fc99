import postgres from 'postgres';
import { createDatabase, databaseOptionsOf, useDatabase } from '../../src/db/client.js';
import { useFileSettings } from './file-settings.js';

export interface OwnDatabase {
  url: string;
  drop: () => Promise<void>;
}

/** The run's migrated database that no one connects to, which the run's and the files' own databases are copies of (global-setup.ts). */
export function templateDatabaseOf(runDatabase: string): string {
  return `${runDatabase}_template`;
}

/**
 * A migrated database of one test file alone, beside the run's on the same server: for a file
 * whose sweepers and workers act on every row of a database, which must neither touch the rows of
 * files running at the same time nor count them. For a process that does not use it itself (a
 * spawned one's); a test file's own: useOwnDatabase.
 */
export async function createOwnDatabase(suffix: string): Promise<OwnDatabase> {
  const runUrl = new URL(process.env.DATABASE_URL!);
  const runDatabase = runUrl.pathname.slice(1);
  const name = `${runDatabase}_${suffix}`;
  const adminUrl = new URL(runUrl);
  adminUrl.pathname = '/postgres';
  const admin = () => postgres(adminUrl.toString(), { max: 1, onnotice: () => {} });
  const creator = admin();
  await creator.unsafe(`create database "${name}" template "${templateDatabaseOf(runDatabase)}"`);
  await creator.end();
  const url = new URL(runUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const dropper = admin();
      await dropper.unsafe(`drop database if exists "${name}" with (force)`);
      await dropper.end();
    },
  };
}

/**
 * A migrated database of this test file alone (createOwnDatabase), made its process's database
 * before anything has used one, and its DATABASE_URL the one its child processes inherit. Call it at
 * the top of the file; end the pool (`pool().end()`) before `drop`.
 */
export async function useOwnDatabase(suffix: string): Promise<OwnDatabase> {
  const own = await createOwnDatabase(suffix);
  useDatabase(createDatabase(databaseOptionsOf(useFileSettings({ DATABASE_URL: own.url }))));
  return own;
}
