// One scenario of `npm run chaos`, in a process of its own (run-chaos.ts starts it with the
// scenario's own database in DATABASE_URL, so that the app modules loaded here use it). Prints one
// `CHAOS-RESULT {json}` line: the figures in words, and whether the scenario met its bound.
import { ownPostgresAvailable, startOwnPostgres } from '../support/own-postgres.js';
import { useFileSettings } from '../support/file-settings.js';
import { endAll } from './own-processes.js';

export interface ScenarioResult {
  line: string;
  ok: boolean;
  verdict: string;
}

/** What a scenario must undo if this process is stopped midway, beside its processes (endAll). */
const cleanups: Array<() => Promise<void>> = [];

const scenarios: Record<string, (databaseUrl: string) => Promise<ScenarioResult>> = {
  'redis-loss': async (databaseUrl) => {
    const { runRedisLoss, describeRedisLoss } = await import('./redis-loss.js');
    const f = await runRedisLoss({ databaseUrl, bookingsPerSecond: 10, beforeMs: 10_000, outageMs: 15_000, afterMs: 10_000 });
    const within = (ms: number | null) => ms !== null && ms <= 60_000;
    const ok = f.missing === 0 && within(f.schedulesBackMs) && within(f.backlogDispatchedMs) && f.exitedProcesses === 0;
    return { line: describeRedisLoss(f), ok, verdict: 'missing 0, schedules and backlog back within 60 s, no process exited' };
  },
  'redis-loss-heavy': async (databaseUrl) => {
    const { runRedisLoss, describeRedisLoss } = await import('./redis-loss.js');
    const f = await runRedisLoss({
      databaseUrl,
      bookingsPerSecond: 10,
      beforeMs: 5_000,
      outageMs: 15_000,
      afterMs: 5_000,
      strandedEvents: 10_000,
      deadlineMs: 240_000,
    });
    const ok = f.missing === 0 && f.backlogDispatchedMs !== null && f.backlogDispatchedMs <= 60_000 && f.exitedProcesses === 0;
    return {
      line: describeRedisLoss(f),
      ok,
      verdict: '10,000 events stranded during the outage all delivered within 60 s of Redis returning',
    };
  },
  'slow-destination': async (databaseUrl) => {
    const { runSlowDestination, describeSlowDestination } = await import('./slow-destination.js');
    const f = await runSlowDestination({ databaseUrl, bookings: 150, bookingsPerSecond: 10 });
    const ok = f.missing === 0 && f.besideP99 <= 2 * f.aloneP99 && f.exitedProcesses === 0;
    return { line: describeSlowDestination(f), ok, verdict: "the healthy destination's p99 within 2x of its p99 alone, missing 0" };
  },
  // A cluster of its own, to stop: this process's database client must use it, so it is chosen
  // before the app modules are loaded.
  'postgres-outage': async () => {
    const cluster = await startOwnPostgres();
    cleanups.push(cluster.destroy);
    try {
      useFileSettings({ DATABASE_URL: cluster.url });
      const { runMigrations } = await import('../../src/db/migrate.js');
      await runMigrations(cluster.url);
      const { runPostgresOutage, describePostgresOutage } = await import('./postgres-outage.js');
      const f = await runPostgresOutage({ cluster, writers: 8, readers: 4, outageMs: 15_000 });
      const ok = f.exitedProcesses === 0 && f.unexpected === 0 && f.discarded === 0 && f.missing === 0;
      return { line: describePostgresOutage(f), ok, verdict: 'every process up, only 2xx/4xx/503, 0 jobs discarded, missing 0' };
    } finally {
      await cluster.destroy();
      cleanups.splice(cleanups.indexOf(cluster.destroy), 1);
    }
  },
  'sigterm-drain': async (databaseUrl) => {
    const { runSigtermDrain, describeSigtermDrain } = await import('./sigterm-drain.js');
    const f = await runSigtermDrain({ databaseUrl, clients: 8 });
    const ok = f.lost === 0 && f.exitCode === 0 && f.missing === 0 && f.exitedProcesses === 0;
    return { line: describeSigtermDrain(f), ok, verdict: '0 requests reset or unanswered, clean exit, missing 0' };
  },
  // The same, SIGTERM to the combined process of `npm start` (web, workers and timers in one process).
  'sigterm-drain-combined': async (databaseUrl) => {
    const { runSigtermDrain, describeSigtermDrain } = await import('./sigterm-drain.js');
    const f = await runSigtermDrain({ databaseUrl, clients: 8, stopped: 'all' });
    const ok = f.lost === 0 && f.exitCode === 0 && f.missing === 0 && f.duplicates === 0 && f.exitedProcesses === 0;
    return { line: describeSigtermDrain(f), ok, verdict: '0 requests reset or unanswered, clean exit, missing 0, no webhook twice' };
  },
};

export const scenarioNames = Object.keys(scenarios);

/** Scenarios that bring their own database (a cluster they stop) and when they can run. */
export const ownDatabaseScenarios: Record<string, { available: boolean; without: string }> = {
  'postgres-outage': { available: ownPostgresAvailable, without: 'needs the PostgreSQL binaries to run a cluster of its own' },
};

if (process.argv[1]?.endsWith('chaos-scenario.ts')) {
  const name = process.argv[2];
  const stopNow = async (code: number) => {
    await endAll();
    for (const cleanup of cleanups) await cleanup().catch(() => {});
    process.exit(code);
  };
  process.once('SIGTERM', () => void stopNow(143));
  process.once('SIGINT', () => void stopNow(130));
  let code = 0;
  try {
    const run = scenarios[name];
    if (!run) throw new Error(`unknown scenario ${name}; expected one of ${scenarioNames.join(', ')}`);
    useFileSettings({});
    const result = await run(process.env.DATABASE_URL!);
    console.log(`CHAOS-RESULT ${JSON.stringify(result)}`);
  } catch (err) {
    console.log(
      `CHAOS-RESULT ${JSON.stringify({ line: `FAILED: ${(err as Error).stack ?? err}`, ok: false, verdict: 'the scenario did not complete' })}`,
    );
    code = 1;
  } finally {
    await endAll();
    const sql = (await import('../../src/db/client.js')).pool();
    await sql.end({ timeout: 1 }).catch(() => {});
  }
  process.exit(code);
}
