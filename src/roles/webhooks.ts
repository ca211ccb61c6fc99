import { config } from '../config.js';
import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { DestinationSlots } from '../services/webhooks/destination-slots.js';
import { deliverWebhookJob } from '../services/webhooks/deliver-webhook-job.js';
import { promoteDeliveryJob, webhookBackoff } from '../services/webhooks/delivery-queue.js';

export async function startWebhooksRole(): Promise<() => Promise<void>> {
  // The per-destination limit of this process (docs/webhooks.md "Isolation per destination").
  const slots = new DestinationSlots({
    redisUrl: config.REDIS_URL,
    prefix: config.QUEUE_PREFIX,
    limit: config.WEBHOOK_DESTINATION_CONCURRENCY,
    workerConcurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    wake: promoteDeliveryJob,
  });
  const { close } = startWorker(queueNames.webhookDelivery, (job, token, log) => deliverWebhookJob(slots, job, token, log), {
    concurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    settings: { backoffStrategy: webhookBackoff },
    // A worker that dies mid-delivery loses its lock; another worker takes the job over once it expires.
    lockDuration: config.WEBHOOK_WORKER_LOCK_MS,
    stalledInterval: config.WEBHOOK_WORKER_LOCK_MS,
  });
  return async () => {
    await close();
    await slots.close();
  };
}
