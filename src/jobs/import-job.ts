import { z } from 'zod';
import type { WorkerOptions } from 'bullmq';
import type { Config } from '../config.js';
import { takeFairPriorities } from '../queues/fair-share.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { defaultJobOptions, getQueue } from '../queues/queues.js';

/** worker-imports: one import, run to its end (src/services/imports/process-import-job.ts). */
// The organisation is for operators searching Bull Board (jobs of older releases lack it).
const importJobSchema = z.object({ importId: z.uuid(), organisationId: z.uuid().optional() });
export type ImportJob = z.infer<typeof importJobSchema>;

export const importJob: JobDefinition<ImportJob> = {
  queueName: 'imports',
  schema: importJobSchema,
  fair: true,
  jobOptions: defaultJobOptions,
  workerOptions: { concurrency: 2 },
};

/** The deployment's lock of an import job: a worker that dies mid-import loses it; another worker takes the job over once it expires. */
export function importWorkerOptions(config: Pick<Config, 'IMPORT_WORKER_LOCK_MS'>): Partial<WorkerOptions> {
  return { lockDuration: config.IMPORT_WORKER_LOCK_MS, stalledInterval: config.IMPORT_WORKER_LOCK_MS };
}

/** The columns of an import row its job is made from. */
export interface ImportToEnqueue {
  id: string;
  organisationId: string;
  kind: string;
  totalRows: number;
}

/**
 * jobId = import id: enqueueing twice is harmless. Named `<kind> import (<rows> rows)` for operators,
 * in its organisation's fair turn (src/queues/fair-share.ts).
 */
export async function addImportJob(row: ImportToEnqueue): Promise<void> {
  const [priority] = await takeFairPriorities(importJob.queueName, row.organisationId, 1);
  await getQueue(importJob.queueName).add(
    `${row.kind} import (${row.totalRows} rows)`,
    { importId: row.id, organisationId: row.organisationId } satisfies ImportJob,
    { ...importJob.jobOptions, jobId: row.id, priority },
  );
}
