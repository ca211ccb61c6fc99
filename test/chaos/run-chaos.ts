// `npm run chaos`: the fault suite. Starts its own PostgreSQL cluster where the machine has the
// binaries (else a database of its own on the shared server), and for each scenario a database of
// its own and a process of its own (chaos-scenario.ts), which starts its own redis-server and the
// platform's roles as separate processes, injects the fault and reports one line of figures.
// Bounded in time; ends only the processes it started, by pid, also on failure or Ctrl-C.
// Usage: npm run chaos [-- --only redis-loss,slow-destination] [-- --quick (without the heavy variant)]
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import postgres from 'postgres';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { ownDatabaseScenarios, scenarioNames, type ScenarioResult } from './chaos-scenario.js';
import { endAll, endProcess } from './own-processes.js';

const scenarioLimitMs = 8 * 60_000;
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1].split(',') : null;
const quick = args.includes('--quick');
const projectRoot = path.resolve(import.meta.dirname, '../..');

let current: ChildProcess | undefined;
let cluster: OwnPostgres | null = null;
const abort = async (why: string, code: number) => {
  console.error(`chaos: ${why}; ending the processes it started`);
  if (current) await endProcess(current, 'SIGTERM', 20_000);
  await endAll();
  await cluster?.destroy();
  process.exit(code);
};
process.once('SIGINT', () => void abort('interrupted', 130));
process.once('SIGTERM', () => void abort('terminated', 143));

cluster = ownPostgresAvailable ? await startOwnPostgres() : null;
const sharedAdminUrl = process.env.CHAOS_ADMIN_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const runId = `${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
const sharedDatabases: string[] = [];

/** A migrated database of its own for each scenario: what one scenario leaves cannot slow the next. */
async function freshDatabase(name: string): Promise<string> {
  const database = `floorline_chaos_${runId}_${name.replace(/-/g, '_')}`;
  const adminUrl = cluster?.url ?? sharedAdminUrl;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${database}"`);
  await admin.end();
  if (!cluster) sharedDatabases.push(database);
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  const { runMigrations } = await import('../../src/db/migrate.js');
  await runMigrations(url.toString());
  return url.toString();
}

/** Runs one scenario in its own process; its last CHAOS-RESULT line is the result. */
async function runScenario(name: string, databaseUrl: string): Promise<ScenarioResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/chaos/chaos-scenario.ts', name], {
    cwd: projectRoot,
    env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  current = child;
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const limit = setTimeout(() => void endProcess(child, 'SIGTERM', 20_000), scenarioLimitMs);
  await new Promise((resolve) => child.once('exit', resolve));
  clearTimeout(limit);
  current = undefined;
  const line = output
    .split('\n')
    .filter((l) => l.startsWith('CHAOS-RESULT '))
    .pop();
  if (!line)
    return {
      line: `no result (exit code ${child.exitCode}, signal ${child.signalCode}; limit ${scenarioLimitMs / 60_000} min)`,
      ok: false,
      verdict: 'the scenario did not complete',
    };
  return JSON.parse(line.slice('CHAOS-RESULT '.length)) as ScenarioResult;
}

let failures = 0;
try {
  console.log(
    `chaos: a database of its own per scenario on ${cluster ? 'a PostgreSQL cluster of its own' : 'the shared PostgreSQL server (no PostgreSQL binaries here)'}; ` +
      'a redis-server of its own per scenario; roles as separate processes',
  );
  for (const name of scenarioNames) {
    if (only && !only.includes(name)) continue;
    if (quick && name === 'redis-loss-heavy') continue;
    const own = ownDatabaseScenarios[name];
    if (own && !own.available) {
      console.log(`${name}: skipped (${own.without})`);
      continue;
    }
    const began = Date.now();
    const result = await runScenario(name, own ? '' : await freshDatabase(name));
    if (!result.ok) failures++;
    console.log(
      `${name}: ${result.line} → ${result.ok ? 'OK' : 'NOT MET'} (${result.verdict}) [${((Date.now() - began) / 1000).toFixed(0)} s]`,
    );
  }
} finally {
  await endAll();
  await cluster?.destroy();
  if (sharedDatabases.length) {
    const admin = postgres(sharedAdminUrl, { max: 1, onnotice: () => {} });
    for (const database of sharedDatabases) await admin.unsafe(`drop database if exists "${database}" with (force)`).catch(() => {});
    await admin.end();
  }
}
console.log(`chaos: ${failures ? `${failures} scenario(s) not met` : 'every scenario met'}`);
process.exit(failures ? 1 : 0);
