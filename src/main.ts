import { allRoles, type RoleName } from './roles/role-names.js';
import { startProcess } from './roles/start-process.js';

/** `npm start`: migrate, then every role in this one process. `--role X` runs one role only. */
const roleArg = process.argv.indexOf('--role');
const roles = roleArg > 0 ? [process.argv[roleArg + 1] as RoleName] : allRoles;
if (!roles.every((r) => allRoles.includes(r))) {
  console.error(`unknown role; expected one of ${allRoles.join(', ')}`);
  process.exit(1);
}
process.exit(await startProcess(process.env, roles, { migrate: roleArg < 0 || process.argv.includes('--migrate') }));
