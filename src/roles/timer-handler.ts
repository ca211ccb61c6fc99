import type { JobHandler } from '../queues/job-definition.js';
import { runTimerTask } from '../services/timers/run-timer-task.js';
import type { DeliveryQueueSettings } from '../services/webhooks/enqueue-deliveries.js';
import type { TimerJob } from '../jobs/timer-job.js';

/** worker-timers: runs the job's task, logging with the job's logger; the swept deliveries enqueued with `settings`. */
export const createTimerJobHandler =
  (settings: DeliveryQueueSettings): JobHandler<TimerJob> =>
  ({ task }, _job, log) =>
    runTimerTask(task, log, settings);
