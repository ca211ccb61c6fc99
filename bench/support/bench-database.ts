import postgres from 'postgres';

const adminUrl = process.env.BENCH_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * A database of its own for a benchmark run (dropped and re-created), migrated; sets DATABASE_URL
 * and a Redis prefix in this process's environment so that the app modules imported afterwards use them.
 */
export async function prepareBenchDatabase(name: string): Promise<string> {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  Object.assign(process.env, {
    DATABASE_URL: url.toString(),
    QUEUE_PREFIX: `{${name}}`,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
    ADMIN_PASSWORD: process.env.ADMIN_PASSWORD ?? 'bench',
  });
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(url.toString());
  return url.toString();
}
