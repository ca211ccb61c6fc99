import type { JobHandler } from '../queues/job-definition.js';
import { processEventInBatch } from '../services/event-processing/process-event.js';
import type { EventJob } from './event-job.js';

/** worker-events: the event is processed in a batch with its organisation's jobs running beside it. */
export const handleEventJob: JobHandler<EventJob> = (payload) => processEventInBatch(payload);
