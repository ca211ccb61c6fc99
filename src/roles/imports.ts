import type { Config } from '../config.js';
import { handleImportJob } from './import-handler.js';
import { importJob, importWorkerOptions } from '../jobs/import-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startImportsRole(config: Config): Promise<() => Promise<void>> {
  return startJobWorker(importJob, handleImportJob, importWorkerOptions(config)).close;
}
