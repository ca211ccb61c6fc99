import { config } from '../config.js';
import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { closeDestinationSlots, configureDestinationWaiting } from '../services/webhooks/destination-slots.js';
import { deliverWebhookJob } from '../services/webhooks/deliver-webhook-job.js';
import { webhookBackoff } from '../services/webhooks/delivery-queue.js';

export async function startWebhooksRole(): Promise<() => Promise<void>> {
  configureDestinationWaiting(config.WEBHOOK_WORKER_CONCURRENCY);
  const { close } = startWorker(queueNames.webhookDelivery, deliverWebhookJob, {
    concurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    settings: { backoffStrategy: webhookBackoff },
    // A worker that dies mid-delivery loses its lock; another worker takes the job over once it expires.
    lockDuration: config.WEBHOOK_WORKER_LOCK_MS,
    stalledInterval: config.WEBHOOK_WORKER_LOCK_MS,
  });
  return async () => {
    await close();
    await closeDestinationSlots();
  };
}
