import type { JobHandler } from '../queues/job-definition.js';
import { runTimerTask } from '../services/timers/run-timer-task.js';
import type { TimerJob } from './timer-job.js';

/** worker-timers: runs the job's task, logging with the job's logger. */
export const handleTimerJob: JobHandler<TimerJob> = ({ task }, _job, log) => runTimerTask(task, log);
