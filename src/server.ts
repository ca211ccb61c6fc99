import { explainUnreachable } from './preflight.js';
import { runRoles } from './roles/run-roles.js';

await explainUnreachable();
await runRoles(['web']);
