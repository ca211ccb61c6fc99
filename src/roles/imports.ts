import { config } from '../config.js';
import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { processImportJob } from '../services/imports/process-import-job.js';

export async function startImportsRole(): Promise<() => Promise<void>> {
  const { close } = startWorker(queueNames.imports, processImportJob, {
    concurrency: 2,
    lockDuration: config.IMPORT_WORKER_LOCK_MS,
    stalledInterval: config.IMPORT_WORKER_LOCK_MS,
  });
  return close;
}
