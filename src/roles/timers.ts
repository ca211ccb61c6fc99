import type { Queue } from 'bullmq';
import { logger } from '../logger.js';
import { queueNames } from '../queues/queue-names.js';
import { getQueue, onQueueConnectionReady } from '../queues/queues.js';
import { startWorker } from '../queues/start-worker.js';
import type { TimerJob } from '../queues/job-payloads.js';
import { runTimerJob } from '../services/timers/run-timer-task.js';

/** Job schedulers are upserted by id: several worker-timers processes share one schedule, so nothing runs twice. */
export const timerSchedules: Array<{ id: string; every: number; task: TimerJob['task'] }> = [
  { id: 'late-no-show', every: 30_000, task: 'late-no-show' },
  { id: 'outbox-sweep', every: 30_000, task: 'outbox-sweep' },
  { id: 'daily-purge', every: 24 * 3600_000, task: 'daily-purge' },
  { id: 'waitlist-expiry', every: 3600_000, task: 'waitlist-expiry' },
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
    await queue.upsertJobScheduler(s.id, { every: s.every }, { name: s.task, data: { task: s.task }, opts: { attempts: 1, removeOnComplete: 100, removeOnFail: 500 } });
  }
}

export async function startTimersRole(): Promise<() => Promise<void>> {
  const queue = getQueue(queueNames.timers);
  await upsertTimerSchedules(queue);
  // Redis holds the schedules only: restore them whenever Redis comes back, possibly empty (docs/architecture.md).
  const restore = (reason: 'reconnect' | 'interval') => {
    upsertTimerSchedules(queue).then(
      () => reason === 'reconnect' && logger.info('redis ready: timer schedules upserted'),
      (err: unknown) => logger.warn({ err: (err as Error).message }, `timer schedules not upserted; next try within ${scheduleRestoreIntervalMs / 1000} s`),
    );
  };
  const stopListening = onQueueConnectionReady(() => restore('reconnect'));
  const interval = setInterval(() => restore('interval'), scheduleRestoreIntervalMs);
  const { close } = startWorker(queueNames.timers, runTimerJob, { concurrency: 2 });
  return async () => {
    clearInterval(interval);
    stopListening();
    await close();
  };
}
