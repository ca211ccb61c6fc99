import type { Job } from 'bullmq';

// TRANSITIONAL: replaced by the import implementation (issues 5 and 7).
export async function processImportJob(job: Job): Promise<void> {
  throw new Error(`imports not implemented yet (job ${job.id})`);
}
