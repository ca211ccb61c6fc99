import { config } from './config.js';
import { runMigrations } from './db/migrate.js';
import { logger } from './logger.js';
import { explainUnreachable } from './preflight.js';
import { runRoles } from './roles/run-roles.js';
import { allRoles, type RoleName } from './roles/role-starters.js';

/** `npm start`: migrate, then every role in this one process. `--role X` runs one role only. */
async function main() {
  const roleArg = process.argv.indexOf('--role');
  const roles = roleArg > 0 ? [process.argv[roleArg + 1] as RoleName] : allRoles;
  if (!roles.every((r) => allRoles.includes(r))) {
    console.error(`unknown role; expected one of ${allRoles.join(', ')}`);
    process.exit(1);
  }
  await explainUnreachable();
  if (roleArg < 0 || process.argv.includes('--migrate')) await runMigrations(config.DATABASE_DIRECT_URL ?? config.DATABASE_URL);
  await runRoles(roles);
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'start-up failed');
  process.exit(1);
});
