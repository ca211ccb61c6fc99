import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { eventBatchSize, processEventJob } from '../services/events/process-event.js';

export async function startEventsRole(): Promise<() => Promise<void>> {
  // As many jobs at once as one batch holds: the running jobs are processed together.
  const { close } = startWorker(queueNames.events, processEventJob, { concurrency: eventBatchSize });
  return async () => close();
}
