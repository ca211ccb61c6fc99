import type { JobHandler } from '../queues/job-definition.js';
import { markImportFailed, runImport } from '../services/imports/process-import-job.js';
import type { ImportJob } from '../jobs/import-job.js';

/** worker-imports: runs the import to its end; when the last attempt fails, the import is marked `failed`. */
export const handleImportJob: JobHandler<ImportJob> = async ({ importId }, job) => {
  try {
    await runImport(importId);
  } catch (err) {
    if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await markImportFailed(importId);
    throw err;
  }
};
