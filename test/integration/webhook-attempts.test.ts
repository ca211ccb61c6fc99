import { describe, expect, it } from 'vitest';

import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { client, createTenant, type Client } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues, and the retry schedule compressed into about 5 s.
useOwnQueuePrefix('attempts');

// 9 bytes with an invalid one, then x up to byte 1022, then a euro sign (3 bytes) cut by the
// 1,024-byte limit, then 200 KB more that must not be kept.
const prefix = Buffer.concat([Buffer.from('error: '), Buffer.from([0xff]), Buffer.from(' ')]);
const errorPage = Buffer.concat([
  prefix,
  Buffer.from('x'.repeat(1022 - prefix.length)),
  Buffer.from('€'),
  Buffer.from('TAIL'.repeat(50_000)),
]);
const expectedExcerpt = `error: \ufffd ${'x'.repeat(1022 - prefix.length)}\ufffd`;

// The partner fails the first attempt with an error page, then accepts.
const pipeline = useWebhookPipeline({
  retry: { backoffScale: 0.001 },
  policy: (_request, index) => (index === 0 ? { status: 500, body: errorPage } : 200),
});

async function readAllAttempts(api: Client, deliveryId: string) {
  const attempts: Array<Record<string, any>> = [];
  let path: string | null = `/webhook-deliveries/${deliveryId}/attempts?limit=2`;
  while (path) {
    const page: { status: number; body: any } = await api.get(path);
    expect(page.status).toBe(200);
    attempts.push(...page.body.data);
    path = page.body.nextCursor ? `/webhook-deliveries/${deliveryId}/attempts?limit=2&cursor=${page.body.nextCursor}` : null;
  }
  return attempts;
}

describe('attempt log', () => {
  it('numbers attempts over the delivery’s life across a redelivery, with status, one-line error and a 1,024-byte excerpt; the job says each attempt in one line', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const created = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    const endpointId = created.body.webhookEndpoint.id;
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Partner',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    const partnerHost = new URL(pipeline.receiver.url).host;

    const { eventId } = await emitReservationEvent(tenant);
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered');
    expect(delivered.attempts).toBe(2);

    // A second cycle to an address that refuses connections: its attempts continue the numbering.
    const closedPort = await freePort();
    expect((await api.patch(`/webhook-endpoints/${endpointId}`, { url: `http://127.0.0.1:${closedPort}/hooks` })).status).toBe(200);
    expect((await api.post(`/webhook-deliveries/${delivered.id}/redeliver`)).status).toBe(202);
    const discarded = await waitForDelivery(eventId, (d) => d.status === 'discarded', 30_000);
    expect(discarded.attempts).toBe(5);

    const attempts = await readAllAttempts(api, delivered.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(attempts[0]).toMatchObject({ responseStatus: 500, error: `HTTP 500 from ${partnerHost}`, responseBodyExcerpt: expectedExcerpt });
    expect(attempts[1]).toMatchObject({ responseStatus: 200, error: null, responseBodyExcerpt: 'ok' });
    for (const attempt of attempts.slice(2)) {
      expect(attempt).toMatchObject({
        responseStatus: null,
        error: `connection refused by 127.0.0.1:${closedPort}`,
        responseBodyExcerpt: null,
      });
    }
    const started = attempts.map((a) => Date.parse(a.startedAt));
    expect(started).toEqual([...started].sort((a, b) => a - b));
    for (const attempt of attempts) expect(attempt.durationMs).toBeGreaterThanOrEqual(0);

    // Addressed by its idempotency key as well.
    const byKey = await api.get(`/webhook-deliveries/${delivered.idempotencyKey}/attempts`);
    expect(byKey.body.data.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    const sinceRedelivery = await api.get(
      `/webhook-deliveries/${delivered.id}/attempts?changedAfter=${encodeURIComponent(attempts[1].startedAt)}`,
    );
    expect(sinceRedelivery.body.data.map((a: { attempt: number }) => a.attempt)).toEqual([3, 4, 5, 6, 7]);

    // The failed job: one-line errors without a stack trace, and one log line per attempt.
    const job = (await getQueue(webhookDeliveryJob.queueName).getJob(delivered.id))!;
    const refused = `connection refused by 127.0.0.1:${closedPort}`;
    expect(job.failedReason).toBe(`${refused} (attempt 5 of 5)`);
    const stacks = job.stacktrace ?? [];
    expect(stacks.slice(0, 4)).toEqual(
      [1, 2, 3, 4].map((n) =>
        expect.stringMatching(new RegExp(`^${refused} \\(attempt ${n} of 5, next at \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)$`)),
      ),
    );
    expect(stacks[4]).toBe(`${refused} (attempt 5 of 5)`);
    const { logs } = await getQueue(webhookDeliveryJob.queueName).getJobLogs(delivered.id);
    expect(logs).toEqual([1, 2, 3, 4, 5].map((n) => expect.stringMatching(new RegExp(`^attempt ${n} of 5: ${refused} in \\d+ ms$`))));

    // As an operator reads it, through Bull Board's own API: named after what it is about, with
    // the ids to search by, a one-line reason and no stack trace.
    const board = await fetch(`${pipeline.url}/admin/queues/api/queues?activeQueue=${webhookDeliveryJob.queueName}&status=failed&page=1`, {
      headers: { authorization: `Basic ${Buffer.from('admin:test-admin-password').toString('base64')}` },
    });
    expect(board.status).toBe(200);
    const { queues } = (await board.json()) as { queues: Array<{ name: string; jobs: Array<Record<string, any>> }> };
    const shown = queues.find((q) => q.name === webhookDeliveryJob.queueName)!.jobs.find((j) => j.id === delivered.id)!;
    // Named when the cycle was enqueued, after the address the delivery last went to.
    expect(shown.name).toBe(`reservation_created → ${partnerHost}`);
    expect(shown.data).toMatchObject({
      deliveryId: delivered.id,
      organisationId: tenant.organisationId,
      venueId: tenant.venueId,
      eventId,
      endpointId,
      automationId: delivered.automationId,
    });
    expect(shown.failedReason).toBe(`${refused} (attempt 5 of 5)`);
    expect(shown.stacktrace.join('\n')).not.toMatch(/\n\s+at /);
  }, 60_000);
});
