import { startProcess } from '../src/roles/start-process.js';

startProcess(['imports'], { migrate: false });
