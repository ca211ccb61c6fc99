import { Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { createQueueConnection } from '../redis.js';
import type { QueueName } from './queue-names.js';

/** A BullMQ worker with the platform's prefix, its own connection and failure logging by job id. */
export interface RunningWorker<T> {
  worker: Worker<T>;
  /** Waits for the running jobs, then frees the worker's own connection. */
  close: () => Promise<void>;
}

export function startWorker<T>(name: QueueName, processor: Processor<T>, options: Partial<WorkerOptions> = {}): RunningWorker<T> {
  const connection = createQueueConnection();
  connection.on('error', () => {});
  const worker = new Worker<T>(name, processor, {
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
