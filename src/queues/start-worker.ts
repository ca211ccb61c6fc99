import { DelayedError, Worker, type Job, type Processor, type WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import { isConnectionError } from '../lib/connection-errors.js';
import { logger } from '../logger.js';
import { jobOutcomeOf, observeJob } from '../metrics/counters.js';
import { createQueueConnection, queuePrefix } from '../redis.js';
import { closeConnection } from '../redis/connections.js';
import { coalesceVirtualTimeMoves, restartVirtualTimeIfHigh } from './fair-share.js';
import type { JobDefinition, JobHandler } from './job-definition.js';
import { enterSpan, forgetJobSpan, rememberJobSpan, type TraceCarrier } from '../tracing/tracing.js';

/** A BullMQ worker with the platform's prefix, its own connection and failure logging by job id. */
export interface RunningWorker<T> {
  worker: Worker<T>;
  /** Waits for the running jobs, then frees the worker's own connection. */
  close: () => Promise<void>;
}

const lostListeners = new Set<(queue: string) => void>();

/**
 * Calls `listener` when a worker's queue connection ends for good (it gave up reconnecting after
 * REDIS_GIVE_UP_AFTER_SECONDS): the process can no longer serve its queue and must say so by exiting
 * non-zero (src/roles/run-roles.ts). Returns the function that stops listening.
 */
export function onWorkerConnectionLost(listener: (queue: string) => void): () => void {
  lostListeners.add(listener);
  return () => void lostListeners.delete(listener);
}

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
 * Runs the handler on the job's data checked by the definition's schema (a payload it rejects fails
 * the job), with the job's logger; postpones the job while the database is unreachable; moves a fair
 * queue's virtual time; records the job's duration and outcome (job_duration_seconds).
 */
function instrument<T>({ queueName: name, schema, fair }: JobDefinition<T>, handler: JobHandler<T>): Processor<T> {
  const advanceVirtualTime = fair ? coalesceVirtualTimeMoves(name) : null;
  return (job, token) =>
    enterSpan(
      `process ${name}`,
      () => jobSpanStart(name, job),
      async (span) => {
        const started = process.hrtime.bigint();
        const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
        // A child logger of this job: its lines carry the queue and the job id.
        const log = logger.child({ queue: name, jobId: job.id });
        rememberJobSpan(name, job.id!, span);
        try {
          if (advanceVirtualTime) await advanceVirtualTime(job);
          const result = await handler(schema.parse(job.data), job, log, token);
          observeJob(name, 'completed', seconds());
          span.setAttributes({ 'floorline.job.outcome': 'completed' });
          return result;
        } catch (err) {
          const thrown = await postponeWhileUnavailable(job, token, err, log);
          const outcome = jobOutcomeOf(thrown);
          observeJob(name, outcome, seconds());
          span.setAttributes({ 'floorline.job.outcome': outcome });
          // The error's name only: a message may quote what the job was about.
          if (outcome === 'failed') span.fail((thrown as Error)?.name ?? 'error');
          throw thrown;
        } finally {
          forgetJobSpan(name, job.id!);
          span.end();
        }
      },
    );
}

/**
 * A job's span (docs/operations.md "Tracing"): the first run of a job whose producer stored its trace
 * in the job's data (`trace`: an outbox event's, the first attempt of a delivery) continues that
 * trace; a retry, and any other job (timers, imports), starts a trace of its own.
 */
function jobSpanStart(queue: string, job: Job) {
  const stored = (job.data as { trace?: TraceCarrier } | undefined)?.trace;
  return {
    kind: 'consumer',
    parent: job.attemptsMade === 0 && stored && typeof stored === 'object' ? stored : null,
    attributes: {
      'messaging.system': 'bullmq',
      'messaging.operation.name': 'process',
      'messaging.destination.name': queue,
      'messaging.message.id': job.id,
      'floorline.job.name': job.name,
      'floorline.job.attempt': job.attemptsMade + 1,
    },
  } as const;
}

/**
 * How often at most a worker that found its queue empty looks whether the fair count should start
 * again (src/queues/fair-share.ts): the count grows by far less than its restart point in this time.
 */
const restartCheckEveryMs = 5000;

/** A worker of the definition's queue with its worker options, `overrides` on top (what the deployment configures; tests run fewer jobs at once). */
export function startJobWorker<T>(
  definition: JobDefinition<T>,
  handler: JobHandler<T>,
  overrides: Partial<WorkerOptions> = {},
): RunningWorker<T> {
  const name = definition.queueName;
  const connection = createQueueConnection();
  connection.on('error', () => {});
  let closing = false;
  connection.on('end', () => {
    if (!closing) lostListeners.forEach((listener) => listener(name));
  });
  const worker = new Worker<T>(name, instrument(definition, handler), {
    connection,
    prefix: queuePrefix(name),
    ...definition.workerOptions,
    ...overrides,
  });
  const log = logger.child({ queue: name });
  worker.on('failed', (job: Job<T> | undefined, err: Error) => {
    log.warn({ jobId: job?.id, attemptsMade: job?.attemptsMade, err: err.message }, 'job failed');
  });
  worker.on('error', (err) => log.error({ err: err.message }, 'worker error'));
  if (definition.fair) {
    // Under a light load a worker finds its queue empty after nearly every job: the count is looked
    // at once per restartCheckEveryMs at most, not a round trip each time.
    let checkedAt = -Infinity;
    worker.on('drained', () => {
      if (performance.now() - checkedAt < restartCheckEveryMs) return;
      checkedAt = performance.now();
      void restartVirtualTimeIfHigh(name).catch(() => {});
    });
  }
  return {
    worker,
    close: async () => {
      closing = true;
      await worker.close();
      await closeConnection(connection);
    },
  };
}
