import { describe, expect, it } from 'vitest';

import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { client, createTenant } from '../support/harness.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues, and the whole schedule (1 + 5 + 15 + 60 min) compressed into about 5 s.
useOwnQueuePrefix('dis');

const pipeline = useWebhookPipeline({ retry: { backoffScale: 0.001 }, policy: () => 500 });

describe('discarded deliveries', () => {
  it('after the fifth failure the row is discarded and the job stays failed; redelivery and a Bull Board retry start a new cycle', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Failing',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    const { eventId } = await emitReservationEvent(tenant);

    const discarded = await waitForDelivery(eventId, (d) => d.status === 'discarded', 30_000);
    expect(discarded).toMatchObject({
      attempts: 5,
      discardReason: 'max_attempts',
      lastResponseStatus: 500,
      lastError: 'HTTP 500',
      nextAttemptAt: null,
    });
    expect(pipeline.receiver.received).toHaveLength(5);
    const keys = new Set(pipeline.receiver.received.map((q) => q.headers['x-service-idempotency-key']));
    expect(keys.size).toBe(1);
    expect(new Set(pipeline.receiver.received.map((q) => q.body.toString())).size).toBe(1);
    // Each wait is at least the scaled schedule: 60, 300, 900 and 3600 ms.
    const gaps = pipeline.receiver.received.slice(1).map((q, i) => q.receivedAt - pipeline.receiver.received[i].receivedAt);
    [60, 300, 900, 3600].forEach((wait, i) => expect(gaps[i]).toBeGreaterThanOrEqual(wait - 5));

    const queue = getQueue(webhookDeliveryJob.queueName);
    const job = await eventually(
      async () => {
        const j = await queue.getJob(discarded.id);
        return j && (await j.isFailed()) ? j : undefined;
      },
      5000,
      'failed job',
    );
    expect(job.attemptsMade).toBe(5);
    expect((await queue.getFailed()).map((j) => j.id)).toContain(discarded.id);
    const listed = await api.get(`/webhook-deliveries?status=discarded&venueId=${tenant.venueId}`);
    expect(listed.body.data.map((d: { id: string }) => d.id)).toEqual([discarded.id]);

    // Redelivery through the API: a fresh cycle of five attempts.
    const again = await api.post(`/webhook-deliveries/${discarded.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.delivery).toMatchObject({ status: 'pending', attempts: 0, discardReason: null });
    await pipeline.receiver.waitFor(10, 30_000);
    const rediscarded = await waitForDelivery(eventId, (d) => d.status === 'discarded', 10_000);
    expect(rediscarded.attempts).toBe(5);
    expect(new Set(pipeline.receiver.received.map((q) => q.body.toString())).size).toBe(1);

    // Retrying the failed job in Bull Board is a redelivery too.
    pipeline.receiver.setPolicy(() => 200);
    const failedJob = await eventually(
      async () => {
        const j = await queue.getJob(discarded.id);
        return j && (await j.isFailed()) ? j : undefined;
      },
      5000,
      'failed job',
    );
    await failedJob.retry('failed');
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered', 10_000);
    expect(delivered).toMatchObject({ attempts: 1, lastResponseStatus: 200, discardReason: null });
    expect(pipeline.receiver.received).toHaveLength(11);
  }, 60_000);
});
