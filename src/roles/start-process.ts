import { config } from '../config.js';
import { runMigrations } from '../db/migrate.js';
import { logger } from '../logger.js';
import { explainUnreachable } from '../preflight.js';
import { runRoles } from './run-roles.js';
import type { RoleName } from './role-starters.js';

/**
 * What every entry point does (`npm start`, `dist/src/server.js`, `dist/workers/<role>.js`): stop
 * with one line when PostgreSQL or Redis does not answer, migrate when asked, start the roles. A
 * start-up that fails (a port already taken, a queue that cannot be reached) is one fatal log line
 * with its cause and exit code 1: the process never stays up serving nothing.
 */
export function startProcess(roles: RoleName[], options: { migrate: boolean }): void {
  const start = async () => {
    await explainUnreachable();
    if (options.migrate) await runMigrations(config.DATABASE_DIRECT_URL ?? config.DATABASE_URL);
    await runRoles(roles);
  };
  start().catch((err: unknown) => {
    logger.fatal({ err }, 'start-up failed');
    process.exit(1);
  });
}
