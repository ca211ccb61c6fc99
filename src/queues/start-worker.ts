import { Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import { config } from '../config.js';
import type { Logger } from 'pino';
import { logger } from '../logger.js';
import { jobOutcomeOf, observeJob } from '../metrics/metrics.js';
import { createQueueConnection } from '../redis.js';
import type { QueueName } from './queue-names.js';

/** A BullMQ worker with the platform's prefix, its own connection and failure logging by job id. */
export interface RunningWorker<T> {
  worker: Worker<T>;
  /** Waits for the running jobs, then frees the worker's own connection. */
  close: () => Promise<void>;
}

/** A job processor; `log` is a child logger of this job, whose lines carry its queue and job id. */
export type JobProcessor<T> = (job: Job<T>, token: string | undefined, log: Logger) => Promise<unknown>;

/** Runs the processor with its job logger and records its duration and outcome (job_duration_seconds). */
function instrument<T>(name: QueueName, processor: JobProcessor<T>): Processor<T> {
  return async (job, token) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    try {
      const result = await processor(job, token, logger.child({ queue: name, jobId: job.id }));
      observeJob(name, 'completed', seconds());
      return result;
    } catch (err) {
      observeJob(name, jobOutcomeOf(err), seconds());
      throw err;
    }
  };
}

export function startWorker<T>(name: QueueName, processor: JobProcessor<T>, options: Partial<WorkerOptions> = {}): RunningWorker<T> {
  const connection = createQueueConnection();
  connection.on('error', () => {});
  const worker = new Worker<T>(name, instrument(name, processor), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: 10,
    ...options,
  });
  const log = logger.child({ queue: name });
  worker.on('failed', (job: Job<T> | undefined, err: Error) => {
    log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'job failed');
  });
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  return {
    worker,
    close: async () => {
      await worker.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
