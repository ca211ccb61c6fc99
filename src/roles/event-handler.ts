import type { JobHandler } from '../queues/job-definition.js';
import { processEventInBatch } from '../services/event-processing/process-event.js';
import type { DeliveryQueueSettings } from '../services/webhooks/enqueue-deliveries.js';
import type { EventJob } from '../jobs/event-job.js';

/** worker-events: the event is processed in a batch with its organisation's jobs running beside it; its deliveries enqueued with `settings`. */
export const createEventJobHandler =
  (settings: DeliveryQueueSettings): JobHandler<EventJob> =>
  (payload) =>
    processEventInBatch(payload, settings);
