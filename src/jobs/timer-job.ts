import type { Queue } from 'bullmq';
import { z } from 'zod';
import { logger } from '../logger.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { getQueue, onQueueConnectionReady } from '../queues/queues.js';

/** worker-timers: one run of a platform task (src/services/timers/run-timer-task.ts); the job is named after its task. */
const timerJobSchema = z.object({
  task: z.enum(['late-no-show', 'outbox-sweep', 'daily-purge', 'waitlist-expiry', 'analyze-tables', 'learn-turn-times']),
});
export type TimerJob = z.infer<typeof timerJobSchema>;
export type TimerTask = TimerJob['task'];

export const timerJob: JobDefinition<TimerJob> = {
  queueName: 'timers',
  schema: timerJobSchema,
  // The platform's own jobs, not an organisation's: nothing to share between organisations.
  fair: false,
  // Not retried: the schedule runs the task again at its next beat.
  jobOptions: { attempts: 1, removeOnComplete: 100, removeOnFail: 500 },
  workerOptions: { concurrency: 2 },
};

/** Job schedulers are upserted by id: several worker-timers processes share one schedule, so nothing runs twice. */
export const timerSchedules: Array<{ id: string; every: number; task: TimerTask }> = [
  { id: 'late-no-show', every: 30_000, task: 'late-no-show' },
  { id: 'outbox-sweep', every: 30_000, task: 'outbox-sweep' },
  { id: 'daily-purge', every: 24 * 3600_000, task: 'daily-purge' },
  { id: 'waitlist-expiry', every: 3600_000, task: 'waitlist-expiry' },
  { id: 'analyze-tables', every: 60_000, task: 'analyze-tables' },
  { id: 'learn-turn-times', every: 300_000, task: 'learn-turn-times' },
];

/**
 * How often each worker-timers process upserts the schedules again, besides every reconnect: a Redis
 * emptied without dropping its connections (FLUSHALL, a failover to an empty replica) has them back
 * within this period.
 */
export const scheduleRestoreIntervalMs = 20_000;

/**
 * Upserting an existing scheduler with the same interval keeps its next run time, so doing it again
 * and again moves nothing; into an empty Redis it creates the scheduler, whose first run is at once.
 */
export async function upsertTimerSchedules(queue: Queue): Promise<void> {
  for (const s of timerSchedules) {
    await queue.upsertJobScheduler(
      s.id,
      { every: s.every },
      { name: s.task, data: { task: s.task } satisfies TimerJob, opts: timerJob.jobOptions },
    );
  }
}

/**
 * Upserts the schedules now, then again whenever Redis comes back and every scheduleRestoreIntervalMs:
 * Redis holds the schedules only, and may come back empty (docs/architecture.md). Returns the function
 * that stops restoring them.
 */
export async function keepTimerSchedules(): Promise<() => void> {
  const queue = getQueue(timerJob.queueName);
  await upsertTimerSchedules(queue);
  const restore = (reason: 'reconnect' | 'interval') => {
    upsertTimerSchedules(queue).then(
      () => reason === 'reconnect' && logger.info('redis ready: timer schedules upserted'),
      (err: unknown) =>
        logger.warn({ err: (err as Error).message }, `timer schedules not upserted; next try within ${scheduleRestoreIntervalMs / 1000} s`),
    );
  };
  const stopListening = onQueueConnectionReady(() => restore('reconnect'));
  const interval = setInterval(() => restore('interval'), scheduleRestoreIntervalMs);
  return () => {
    clearInterval(interval);
    stopListening();
  };
}

/** The job id of the outbox sweep run ahead of its beat (sweep-outbox.ts): one such run at most is pending. */
export const catchUpSweepJobId = 'outbox-sweep-catch-up';

/** Runs the outbox sweep once, in `delayMs`, unless such a run is already pending. */
export async function addCatchUpSweepJob(delayMs: number): Promise<void> {
  await getQueue(timerJob.queueName).add('outbox-sweep', { task: 'outbox-sweep' } satisfies TimerJob, {
    ...timerJob.jobOptions,
    jobId: catchUpSweepJobId,
    delay: delayMs,
    // Gone once run, so that its job id is free for the next catch-up.
    removeOnComplete: true,
    removeOnFail: true,
  });
}
