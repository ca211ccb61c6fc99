import { startProcess } from '../src/roles/start-process.js';

startProcess(['events'], { migrate: false });
