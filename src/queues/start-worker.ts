import { DelayedError, Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { config } from '../config.js';
import { isConnectionError } from '../lib/connection-errors.js';
import { logger } from '../logger.js';
import { jobOutcomeOf, observeJob } from '../metrics/metrics.js';
import { createQueueConnection } from '../redis.js';
import { advanceVirtualTime, fairQueues, restartVirtualTimeIfHigh } from './fair-share.js';
import type { JobDefinition, JobHandler } from './job-definition.js';
import type { QueueName } from './queue-names.js';

/** A BullMQ worker with the platform's prefix, its own connection and failure logging by job id. */
export interface RunningWorker<T> {
  worker: Worker<T>;
  /** Waits for the running jobs, then frees the worker's own connection. */
  close: () => Promise<void>;
}

/** A job processor; `log` is a child logger of this job, whose lines carry its queue and job id. */
export type JobProcessor<T> = (job: Job<T>, token: string | undefined, log: Logger) => Promise<unknown>;

/** How long a job that met an unreachable database waits before it runs again. */
const unavailableRetryMs = 5000;

/**
 * A job that failed because PostgreSQL could not be reached is not at fault: it goes back to the
 * delayed set and runs again later without consuming an attempt (BullMQ does not count a job moved
 * to delayed), so an outage neither discards jobs nor brings them closer to their last attempt.
 */
async function postponeWhileUnavailable(job: Job, token: string | undefined, err: unknown, log: Logger): Promise<unknown> {
  if (!token || !isConnectionError(err)) return err;
  log.warn({ err: (err as Error).message }, 'database unreachable: job postponed without consuming an attempt');
  await job.moveToDelayed(Date.now() + unavailableRetryMs, token);
  return new DelayedError();
}

/**
 * Runs the processor with its job logger, postpones it while the database is unreachable, and
 * records its duration and outcome (job_duration_seconds).
 */
function instrument<T>(name: string, fair: boolean, processor: JobProcessor<T>): Processor<T> {
  return async (job, token) => {
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    const log = logger.child({ queue: name, jobId: job.id });
    try {
      if (fair) await advanceVirtualTime(name, job);
      const result = await processor(job, token, log);
      observeJob(name, 'completed', seconds());
      return result;
    } catch (err) {
      const thrown = await postponeWhileUnavailable(job, token, err, log);
      observeJob(name, jobOutcomeOf(thrown), seconds());
      throw thrown;
    }
  };
}

export function startWorker<T>(name: QueueName, processor: JobProcessor<T>, options: Partial<WorkerOptions> = {}): RunningWorker<T> {
  return runWorker(name, fairQueues.has(name), processor, options);
}

/**
 * A worker of the definition's queue, with its worker options (`overrides` on top: tests run fewer
 * jobs at once); each job's data is checked by the definition's schema before `handler` sees it.
 */
export function startJobWorker<T>(definition: JobDefinition<T>, handler: JobHandler<T>, overrides: Partial<WorkerOptions> = {}): RunningWorker<T> {
  const processor: JobProcessor<T> = (job, token, log) => handler(definition.schema.parse(job.data), job, log, token);
  return runWorker(definition.queueName, definition.fair, processor, { ...definition.workerOptions, ...overrides });
}

function runWorker<T>(name: string, fair: boolean, processor: JobProcessor<T>, options: Partial<WorkerOptions>): RunningWorker<T> {
  const connection = createQueueConnection();
  connection.on('error', () => {});
  const worker = new Worker<T>(name, instrument(name, fair, processor), {
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
  if (fair) worker.on('drained', () => void restartVirtualTimeIfHigh(name).catch(() => {}));
  return {
    worker,
    close: async () => {
      await worker.close();
      await connection.quit().catch(() => connection.disconnect());
    },
  };
}
