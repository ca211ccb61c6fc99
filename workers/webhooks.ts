import { startProcess } from '../src/roles/start-process.js';

startProcess(['webhooks'], { migrate: false });
