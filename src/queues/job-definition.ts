import type { Job, JobsOptions, WorkerOptions } from 'bullmq';
import type { Logger } from 'pino';
import type { z } from 'zod';

/**
 * One kind of job (docs/architecture.md "Jobs"): what producers need to enqueue it and what a
 * worker needs to run it, in one place (src/jobs/<kind>-job.ts), below the services that enqueue it.
 * Its handler calls those services, so it sits above them, with the role that runs it
 * (src/roles/<kind>-handler.ts).
 */
export interface JobDefinition<T> {
  /** The BullMQ queue; one worker role consumes it. */
  readonly queueName: string;
  /** Checks a job's data when a worker takes it: a job written by an older release must not crash a worker. */
  readonly schema: z.ZodType<T>;
  /** Served fairly between organisations (src/queues/fair-share.ts): every job of the queue carries a fair priority. */
  readonly fair: boolean;
  /** The options each job is enqueued with (its own jobId, delay and priority added). */
  readonly jobOptions: JobsOptions;
  /**
   * The fixed options of the queue's workers: how many jobs each runs at once, lock, stall check. What
   * a deployment configures (a lock, a concurrency, the retry schedule) the role adds when it starts
   * the worker (src/roles/).
   */
  readonly workerOptions: Partial<WorkerOptions>;
}

/** Runs one job: `payload` is its data checked by the definition's schema; `log` is the job's logger (queue, job id). */
export type JobHandler<T> = (payload: T, job: Job<T>, log: Logger, token: string | undefined) => Promise<unknown>;
