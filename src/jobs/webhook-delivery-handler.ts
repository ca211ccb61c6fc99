import type { JobHandler } from '../queues/job-definition.js';
import type { DestinationSlots } from '../services/webhooks/destination-slots.js';
import { deliverWebhookJob } from '../services/webhooks/deliver-webhook-job.js';
import type { WebhookDeliveryJob } from './webhook-delivery-job.js';

/** worker-webhooks: one attempt of one delivery, within the per-destination limit of this process (`slots`). */
export function createWebhookDeliveryHandler(slots: DestinationSlots): JobHandler<WebhookDeliveryJob> {
  return (payload, job, log, token) => deliverWebhookJob(slots, payload, job, log, token);
}
