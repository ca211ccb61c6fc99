import { config } from '../config.js';
import { createWebhookDeliveryHandler } from '../jobs/webhook-delivery-handler.js';
import { connectRedis } from '../redis.js';
import { promoteDeliveryJob, webhookDeliveryJob } from '../jobs/webhook-delivery-job.js';
import { startJobWorker } from '../queues/start-worker.js';
import { DestinationSlots } from '../services/webhooks/destination-slots.js';

export async function startWebhooksRole(): Promise<() => Promise<void>> {
  // The per-destination limit of this process (docs/webhooks.md "Isolation per destination").
  const slots = new DestinationSlots({
    redis: connectRedis('slots'),
    prefix: config.QUEUE_PREFIX,
    limit: config.WEBHOOK_DESTINATION_CONCURRENCY,
    workerConcurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    wake: promoteDeliveryJob,
  });
  const { close } = startJobWorker(webhookDeliveryJob, createWebhookDeliveryHandler(slots));
  return async () => {
    await close();
    await slots.close();
  };
}
