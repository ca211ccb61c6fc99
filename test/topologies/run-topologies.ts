// `npm run topologies`: the platform on Redis topologies of its own (test/topologies/redis-topologies.ts),
// started from the Debian packages (installed when missing and run as root), on free ports, each server
// and role process ended by pid. A database of its own on the shared PostgreSQL, dropped at the end.
// Usage: npm run topologies [-- --only sentinel,cluster]
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { endAll } from '../chaos/own-processes.js';
import { useFileSettings } from '../support/file-settings.js';
import { ensureRedisBinaries } from './own-redis-topologies.js';

const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;
const adminUrl = process.env.TOPOLOGIES_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const database = `floorline_topologies_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;

const stopNow = async (code: number) => {
  await endAll();
  process.exit(code);
};
process.once('SIGINT', () => void stopNow(130));
process.once('SIGTERM', () => void stopNow(143));

ensureRedisBinaries();
const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database "${database}"`);
const url = new URL(adminUrl);
url.pathname = `/${database}`;
const databaseUrl = url.toString();
// The app modules this process loads (tenants, committed events) use this database.
delete process.env.REDIS_URL;
useFileSettings({ DATABASE_URL: databaseUrl });

let failures = 0;
try {
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(databaseUrl);
  const topologies = await import('./redis-topologies.js');
  const scenarios: Record<string, () => Promise<{ line: string; ok: boolean; verdict: string }>> = {
    sentinel: async () => {
      const f = await topologies.runSentinelFailover({ databaseUrl });
      const ok = f.missing === 0 && f.exitedProcesses === 0 && f.newMasterIsReplica && f.readyAgain;
      return {
        line: topologies.describeSentinelFailover(f),
        ok,
        verdict: 'replica promoted, /readyz ok again, missing 0, no process exited or restarted',
      };
    },
    cluster: async () => {
      const f = await topologies.runClusterMigration({ databaseUrl });
      const ok =
        f.missing === 0 &&
        f.exitedProcesses === 0 &&
        f.queueKeysPerMaster.filter((n) => n > 0).length >= 2 &&
        f.readyzNoticedLostMasterMs !== null;
      return {
        line: topologies.describeClusterMigration(f),
        ok,
        verdict:
          "the queues' keys on at least two masters, missing 0 through the migrations, no process exited, /readyz 503 once a master is gone",
      };
    },
  };
  for (const [name, run] of Object.entries(scenarios)) {
    if (only && !only.includes(name)) continue;
    const began = Date.now();
    const result = await run().catch((err: unknown) => ({
      line: `FAILED: ${(err as Error).stack ?? String(err)}`,
      ok: false,
      verdict: 'the scenario did not complete',
    }));
    if (!result.ok) failures++;
    console.log(
      `${name}: ${result.line} → ${result.ok ? 'OK' : 'NOT MET'} (${result.verdict}) [${((Date.now() - began) / 1000).toFixed(0)} s]`,
    );
    await endAll();
  }
} finally {
  await endAll();
  const sql = (await import('../../src/db/client.js')).pool();
  await sql.end({ timeout: 1 }).catch(() => {});
  await admin.unsafe(`drop database if exists "${database}" with (force)`).catch(() => {});
  await admin.end();
}
console.log(`topologies: ${failures ? `${failures} scenario(s) not met` : 'every scenario met'}`);
process.exit(failures ? 1 : 0);
