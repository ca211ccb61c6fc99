import { explainUnreachable } from '../src/preflight.js';
import { runRoles } from '../src/roles/run-roles.js';

await explainUnreachable();
await runRoles(['webhooks']);
