import { queueNames } from '../queues/queue-names.js';
import { getQueue } from '../queues/queues.js';
import { startWorker } from '../queues/start-worker.js';
import type { TimerJob } from '../queues/job-payloads.js';
import { runTimerJob } from '../services/timers/run-timer-task.js';

/** Job schedulers are upserted by id: several worker-timers processes share one schedule, so nothing runs twice. */
const schedules: Array<{ id: string; every: number; task: TimerJob['task'] }> = [
  { id: 'late-no-show', every: 30_000, task: 'late-no-show' },
  { id: 'outbox-sweep', every: 30_000, task: 'outbox-sweep' },
  { id: 'daily-purge', every: 24 * 3600_000, task: 'daily-purge' },
  { id: 'waitlist-expiry', every: 3600_000, task: 'waitlist-expiry' },
];

export async function startTimersRole(): Promise<() => Promise<void>> {
  const queue = getQueue(queueNames.timers);
  for (const s of schedules) {
    await queue.upsertJobScheduler(s.id, { every: s.every }, { name: s.task, data: { task: s.task }, opts: { attempts: 1, removeOnComplete: 100, removeOnFail: 500 } });
  }
  const { close } = startWorker(queueNames.timers, runTimerJob, { concurrency: 2 });
  return close;
}
