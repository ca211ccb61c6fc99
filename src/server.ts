import { startProcess } from './roles/start-process.js';

process.exit(await startProcess(process.env, ['web'], { migrate: false }));
