import type { Config } from '../config.js';
import { createEventJobHandler } from './event-handler.js';
import { eventJob } from '../jobs/event-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startEventsRole(config: Config): Promise<() => Promise<void>> {
  return startJobWorker(eventJob, createEventJobHandler(config)).close;
}
