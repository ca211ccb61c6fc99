import { handleImportJob } from '../jobs/import-handler.js';
import { importJob } from '../jobs/import-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startImportsRole(): Promise<() => Promise<void>> {
  return startJobWorker(importJob, handleImportJob).close;
}
