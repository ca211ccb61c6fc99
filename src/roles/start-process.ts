import { ConfigError, parseConfig, type Config } from '../config.js';
import { runMigrations } from '../db/migrate.js';
import { logger } from '../logger.js';
import { collectProcessMetrics } from '../metrics/counters.js';
import { defaultServiceName, isTracingWanted } from '../lib/tracing-settings.js';
import { explainUnreachable } from '../preflight.js';
import { setUpProcess } from '../set-up-process.js';
import { stopTracing, useTracer } from '../tracing/tracing.js';
import type { RoleName } from './role-names.js';
import { runRoles } from './run-roles.js';

/**
 * What every entry point does (`npm start`, `dist/src/server.js`, `dist/workers/<role>.js`) with the
 * process's environment: parse the configuration, stop with one line when PostgreSQL or Redis does
 * not answer, migrate when asked, start the roles. Resolves with the code the entry point exits
 * with: 1 at once when the configuration is invalid (one line per variable at fault), a server does
 * not answer, or the start-up fails (a port already taken, a queue that cannot be reached: one fatal
 * log line with its cause), so the process never stays up serving nothing; otherwise once the roles
 * have ended (src/roles/run-roles.ts).
 */
export async function startProcess(env: NodeJS.ProcessEnv, roles: RoleName[], options: { migrate: boolean }): Promise<number> {
  let config: Config;
  try {
    config = parseConfig(env);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const line of err.issues) console.error(line);
    return 1;
  }
  const unreachable = await explainUnreachable(config);
  if (unreachable) {
    console.error(unreachable);
    return 1;
  }
  // Tracing first, so that the database is built with its statement spans. Off (the default), the
  // SDK is not even loaded: src/tracing/tracing.ts.
  if (isTracingWanted(env)) {
    const { startTracing } = await import('../tracing/start-tracing.js');
    useTracer(startTracing({ serviceName: defaultServiceName(env, roles) }));
  }
  // The process's configuration and database, built here from what was parsed; the modules that are
  // not given them as parameters reach them through processConfig() and db().
  setUpProcess(config);
  collectProcessMetrics();
  try {
    if (options.migrate) await runMigrations(config.DATABASE_DIRECT_URL ?? config.DATABASE_URL);
    const running = runRoles(config, roles);
    return await Promise.race([running.started.then(() => running.ended), running.ended]);
  } catch (err) {
    logger.fatal({ err }, 'start-up failed');
    return 1;
  } finally {
    // The spans still buffered are exported before the process exits.
    await stopTracing().catch((err: unknown) => logger.warn({ err }, 'tracing did not stop cleanly'));
  }
}
