import { handleTimerJob } from '../jobs/timer-handler.js';
import { keepTimerSchedules, timerJob } from '../jobs/timer-job.js';
import { startJobWorker } from '../queues/start-worker.js';

export async function startTimersRole(): Promise<() => Promise<void>> {
  const stopSchedules = await keepTimerSchedules();
  const { close } = startJobWorker(timerJob, handleTimerJob);
  return async () => {
    stopSchedules();
    await close();
  };
}
