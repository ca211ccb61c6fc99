import { startWorker } from '../queues/start-worker.js';
import { queueNames } from '../queues/queue-names.js';
import { deliverWebhookJob } from '../services/webhooks/deliver-webhook-job.js';

export async function startWebhooksRole(): Promise<() => Promise<void>> {
  const { close } = startWorker(queueNames.webhookDelivery, deliverWebhookJob, { concurrency: 50 });
  return close;
}
