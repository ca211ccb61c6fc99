import { startProcess } from '../src/roles/start-process.js';

startProcess(['timers'], { migrate: false });
