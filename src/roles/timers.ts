import type { Config } from '../config.js';
import { createTimerJobHandler } from './timer-handler.js';
import { keepTimerSchedules, timerJob } from '../jobs/timer-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startTimersRole(config: Config): Promise<() => Promise<void>> {
  const stopSchedules = await keepTimerSchedules();
  const { close } = startJobWorker(timerJob, createTimerJobHandler(config));
  return async () => {
    stopSchedules();
    await close();
  };
}
