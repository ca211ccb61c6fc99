import type { Queue } from 'bullmq';
import { getQueue } from '../queues/queues.js';
import { eventJob } from './event-job.js';
import { importJob } from './import-job.js';
import { timerJob } from './timer-job.js';
import { webhookDeliveryJob } from './webhook-delivery-job.js';

/** Every BullMQ queue of the platform, one per job kind; each is consumed by exactly one worker role. */
export const allQueueNames: readonly string[] = [eventJob, webhookDeliveryJob, importJob, timerJob].map((job) => job.queueName);

/** Every queue, for Bull Board. */
export function getAllQueues(): Queue[] {
  return allQueueNames.map(getQueue);
}
