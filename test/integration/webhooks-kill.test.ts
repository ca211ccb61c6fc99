import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';

import { client, createTenant } from '../support/harness.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { compiledEntry, killProcess } from '../support/entry-process.js';

// Its own queues (no other worker may take the job); its worker processes get a short BullMQ lock so that a dead
// worker's job is handed over within seconds.
useOwnQueuePrefix('kill');

// The receiver holds the first request open; worker-webhooks runs as child processes.
const pipeline = useWebhookPipeline({ policy: (_req, i) => (i === 0 ? 'hold' : 200), webhooksRole: false });
const children: ChildProcess[] = [];

/** worker-webhooks (compiled) as its own process. */
function spawnWebhookWorker(): ChildProcess {
  const child = spawn(process.execPath, [compiledEntry('workers/webhooks.ts')], {
    env: { ...process.env, LOG_LEVEL: 'silent', WEBHOOK_WORKER_LOCK_MS: '2000' },
    stdio: 'ignore',
  });
  children.push(child);
  return child;
}

afterAll(async () => {
  await Promise.all(children.map(killProcess));
});

describe('a worker killed in the middle of a delivery', () => {
  it('loses nothing: another worker retries the job once its lock expires', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Crash',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });

    const first = spawnWebhookWorker();
    const { eventId } = await emitReservationEvent(tenant);
    const [held] = await pipeline.receiver.waitFor(1, 30_000); // the receiver holds this request open
    await killProcess(first);
    const interrupted = await waitForDelivery(eventId, () => true);
    expect(interrupted).toMatchObject({ status: 'pending', attempts: 1 });

    spawnWebhookWorker();
    const [, retried] = await pipeline.receiver.waitFor(2, 30_000);
    expect(retried.headers['x-service-idempotency-key']).toBe(held.headers['x-service-idempotency-key']);
    expect(retried.body.equals(held.body)).toBe(true);
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered', 10_000);
    expect(delivered).toMatchObject({ attempts: 2, lastResponseStatus: 200 });
    expect(pipeline.receiver.received).toHaveLength(2);
  }, 60_000);
});
