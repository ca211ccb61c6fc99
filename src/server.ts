import { startProcess } from './roles/start-process.js';

startProcess(['web'], { migrate: false });
