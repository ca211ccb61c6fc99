import { handleEventJob } from '../jobs/event-handler.js';
import { eventJob } from '../jobs/event-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startEventsRole(): Promise<() => Promise<void>> {
  return startJobWorker(eventJob, handleEventJob).close;
}
