import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { processEventJob } from '../services/events/process-event.js';

export async function startEventsRole(): Promise<() => Promise<void>> {
  const { close } = startWorker(queueNames.events, processEventJob, { concurrency: 20 });
  return close;
}
