import { startProcess } from '../src/roles/start-process.js';

process.exit(await startProcess(process.env, ['timers'], { migrate: false }));
