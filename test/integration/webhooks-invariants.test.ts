import { describe, expect, it, vi } from 'vitest';

import { logger } from '../../src/logger.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { destinationNotAllowed } from '../../src/services/webhooks/post-webhook.js';
import { client, createTenant } from '../support/harness.js';
import { expectInvariantsHold } from '../support/invariants.js';
import { afterAttempt, deliveriesOfEvent, emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: another test file's workers must not take these jobs.
useOwnQueuePrefix('whr');

const pipeline = useWebhookPipeline();

/** Nothing a refused destination answers may name an address or what the resolver said. */
const revealing = /127\.0\.0\.1|::1|ENOTFOUND|EAI_AGAIN|getaddrinfo|not public|loopback|localhost|no-such-host/;

/** With private targets refused by the file's app and worker, as in production (the flag is read at every send). */
async function refusingPrivateTargets<T>(run: () => Promise<T>): Promise<T> {
  pipeline.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS = false;
  try {
    return await run();
  } finally {
    pipeline.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS = true;
  }
}

describe('a refused webhook destination reveals nothing about internal DNS', () => {
  it('POST /webhook-endpoints/test: a name resolving to loopback and a name that does not resolve get the same fixed answer', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const warn = vi.spyOn(logger, 'warn');
    const port = new URL(pipeline.receiver.url).port;
    for (const url of [`https://localhost:${port}/hooks`, 'https://no-such-host.invalid/hooks']) {
      const sent = await refusingPrivateTargets(() => api.post('/webhook-endpoints/test', { venueId: tenant.venueId, url }));
      expect(sent.status, sent.text).toBe(200);
      expect(sent.body.delivery).toMatchObject({ status: 'failed', responseStatus: null, error: destinationNotAllowed });
      expect(sent.text).not.toMatch(revealing);
    }
    // A name that does not resolve is refused even where private targets are allowed.
    const unresolved = await api.post('/webhook-endpoints/test', { venueId: tenant.venueId, url: 'https://no-such-host.invalid/hooks' });
    expect(unresolved.body.delivery.error).toBe(destinationNotAllowed);
    expect(pipeline.receiver.received).toHaveLength(0);
    // The detail stays in the server log.
    const details = warn.mock.calls.map(([fields]) => JSON.stringify(fields));
    expect(details.some((d) => /localhost/.test(d) && /127\.0\.0\.1|::1/.test(d) && /not public/.test(d))).toBe(true);
    expect(details.some((d) => /no-such-host\.invalid/.test(d) && /ENOTFOUND|EAI_AGAIN/.test(d))).toBe(true);
    warn.mockRestore();
  });

  it('delivery records: lastError is the fixed reason, in the database and in GET /webhook-deliveries', async () => {
    for (const receiverUrl of ['https://no-such-host.invalid/hooks', `https://localhost:${new URL(pipeline.receiver.url).port}/hooks`]) {
      const tenant = await createTenant();
      const api = client(pipeline.url, tenant.key);
      expect((await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: receiverUrl })).status).toBe(201);
      expect(
        (
          await api.post('/automations', {
            venueId: tenant.venueId,
            name: 'CRM',
            eventTypes: ['reservation_created'],
            action: { type: 'partner_notification' },
          })
        ).status,
      ).toBe(201);
      const delivery = await refusingPrivateTargets(async () => {
        const { eventId } = await emitReservationEvent(tenant);
        return waitForDelivery(eventId, afterAttempt(1));
      });
      expect(delivery).toMatchObject({ status: 'pending', lastResponseStatus: null, lastError: destinationNotAllowed });
      const listed = await api.get(`/webhook-deliveries?venueId=${tenant.venueId}`);
      expect(listed.body.data[0].lastError).toBe(destinationNotAllowed);
      expect(listed.text).not.toMatch(/127\.0\.0\.1|::1|ENOTFOUND|EAI_AGAIN|getaddrinfo|not public/);
    }
  }, 30_000);
});

describe('concurrent redeliveries', () => {
  /** Rounds of concurrent redeliveries of one delivery, and requests per round. */
  const rounds = 20;
  const racers = 12;

  it(`of one concluded delivery, ${rounds} rounds of ${racers}: one 202, the others 409 delivery_pending, the new cycle's job is never removed and is sent`, async () => {
    const r = await pipeline.startReceiver();
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'CRM',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    const { eventId } = await emitReservationEvent(tenant);
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered');
    await r.waitFor(1);
    const queue = getQueue(webhookDeliveryJob.queueName);
    /** The last attempt has finished too (its row is concluded a moment before its job): the delivery can be redelivered. */
    const lastAttemptFinished = () =>
      eventually(
        async () => ((await queue.getJobState(delivered.id)) === 'unknown' ? true : undefined),
        10_000,
        'the finished job of the last attempt',
      );

    for (let round = 1; round <= rounds; round++) {
      await lastAttemptFinished();
      // A backlog, as behind other deliveries: the new cycle's job waits in the queue while the losers
      // run, so a loser that removed the delivery's job would remove the new cycle.
      await queue.pause();
      try {
        const answers = await Promise.all(Array.from({ length: racers }, () => api.post(`/webhook-deliveries/${delivered.id}/redeliver`)));
        expect(answers.map((a) => a.status).sort(), `round ${round}`).toEqual([202, ...Array<number>(racers - 1).fill(409)]);
        expect(
          answers.filter((a) => a.status === 409).every((a) => a.body.error.details?.reason === 'delivery_pending'),
          `round ${round}`,
        ).toBe(true);
        const [row] = await deliveriesOfEvent(eventId);
        expect(row.status, `round ${round}`).toBe('pending');
        expect(await queue.getJobState(delivered.id), `round ${round}: the job of the reopened delivery`).toBe('prioritized');
      } finally {
        await queue.resume();
      }
      await r.waitFor(round + 1);
      await waitForDelivery(eventId, (d) => d.status === 'delivered' && d.attempts === 1);
    }
    await lastAttemptFinished();
    expect(r.received).toHaveLength(rounds + 1);
    await expectInvariantsHold([tenant.venueId]);
  }, 120_000);
});
