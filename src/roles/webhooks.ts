import type { Config } from '../config.js';
import { createWebhookDeliveryHandler } from './webhook-delivery-handler.js';
import { connectRedis } from '../redis.js';
import { promoteDeliveryJob, webhookDeliveryJob, webhookWorkerOptions } from '../jobs/webhook-delivery-job.js';
import { realRetrySchedule, type RetrySchedule } from '../lib/webhook-backoff.js';
import { startJobWorker } from '../queues/start-worker.js';
import { batchDeliveredRecords } from '../services/webhooks/delivery-state.js';
import { DestinationSlots } from '../services/webhooks/destination-slots.js';
import { SigningSecretBox } from '../services/webhooks/signing-secrets.js';

/**
 * How long a delivered attempt's record waits for others of this process to share its statement
 * (docs/architecture.md "Webhook delivery"): at 400 deliveries a second a process, about five a
 * statement, at one commit each rather than one per delivery.
 */
const deliveredRecordLingerMs = 10;

/** worker-webhooks; `retry`: the real schedule unless a test compresses it. */
export async function startWebhooksRole(config: Config, retry: RetrySchedule = realRetrySchedule): Promise<() => Promise<void>> {
  // The per-destination limit of this process (docs/webhooks.md "Isolation per destination").
  const slots = new DestinationSlots({
    redis: connectRedis('slots'),
    prefix: config.QUEUE_PREFIX,
    limit: config.WEBHOOK_DESTINATION_CONCURRENCY,
    workerConcurrency: config.WEBHOOK_WORKER_CONCURRENCY,
    wake: promoteDeliveryJob,
  });
  const { close } = startJobWorker(
    webhookDeliveryJob,
    createWebhookDeliveryHandler(slots, {
      retry,
      health: { failures: config.WEBHOOK_DISABLE_AFTER_FAILURES, minutes: config.WEBHOOK_DISABLE_AFTER_MINUTES },
      secrets: new SigningSecretBox(config.secretsKey),
      targets: config,
      recordDelivered: batchDeliveredRecords(deliveredRecordLingerMs),
    }),
    webhookWorkerOptions(config, retry),
  );
  return async () => {
    await close();
    await slots.close();
  };
}
