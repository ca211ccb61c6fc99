import { describe, expect, it } from 'vitest';

import { Webhook } from 'standardwebhooks';
import { verifyWebhook } from '../../clients/typescript/src/verify-webhook.js';
import { client, createTenant } from '../support/harness.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import type { ReceivedWebhook } from '../support/webhook-receiver.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: another test file's workers must not take these deliveries.
useOwnQueuePrefix('sw');

const pipeline = useWebhookPipeline();

/** The receiver's request as the `standardwebhooks` library takes it: the raw body as text and the headers. */
function verifyIndependently(secret: string, request: ReceivedWebhook): unknown {
  return new Webhook(secret).verify(request.body.toString('utf8'), request.headers as Record<string, string>);
}

async function standardEndpoint() {
  const tenant = await createTenant();
  const api = client(pipeline.url, tenant.key);
  const receiver = await pipeline.startReceiver();
  const created = await api.post('/webhook-endpoints', {
    venueId: tenant.venueId,
    url: receiver.url,
    signatureScheme: 'standard-webhooks',
  });
  expect(created.status).toBe(201);
  return { tenant, api, receiver, endpoint: created.body.webhookEndpoint, secret: created.body.secret as string };
}

describe('Standard Webhooks signatures (signatureScheme: standard-webhooks)', () => {
  it('signs real deliveries of an automation so that the standardwebhooks library verifies them', async () => {
    const { tenant, api, receiver, endpoint, secret } = await standardEndpoint();
    expect(endpoint.signatureScheme).toBe('standard-webhooks');
    // The standard's secret format: whsec_ + standard base64 of 32 random bytes.
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    const automation = await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Standard partner',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification', endpointId: endpoint.id },
    });
    expect(automation.status).toBe(201);

    const { eventId, reservation } = await emitReservationEvent(tenant);
    const [request] = await receiver.waitFor(1);
    expect(request.headers['webhook-id']).toMatch(/^automation:[0-9a-f-]{36}:0$/);
    expect(request.headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    // One scheme per destination: the service's own headers are not sent alongside.
    expect(Object.keys(request.headers).filter((name) => name.startsWith('x-service-'))).toEqual([]);

    const envelope = verifyIndependently(secret, request) as { id: string; eventId: string; data: { reservation: { id: string } } };
    expect(envelope).toMatchObject({ id: request.headers['webhook-id'], eventId, data: { reservation: { id: reservation.id } } });
    // A tampered body does not verify.
    expect(() =>
      verifyIndependently(secret, {
        ...request,
        body: Buffer.from(request.body.toString('utf8').replace(reservation.id, crypto.randomUUID())),
      }),
    ).toThrow();
    // The client package's verifier agrees.
    const ours = await verifyWebhook({ rawBody: request.body, headers: request.headers, secrets: secret, scheme: 'standard-webhooks' });
    expect(ours).toMatchObject({ ok: true, idempotencyKey: request.headers['webhook-id'] });
    await waitForDelivery(eventId, (d) => d.status === 'delivered');
  });

  it('during a rotation carries two space-separated signatures: the new secret and the previous one both verify', async () => {
    const { api, receiver, endpoint, secret: firstSecret } = await standardEndpoint();
    const rotated = await api.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlapMinutes: 60 });
    expect(rotated.status).toBe(200);
    const secret = rotated.body.secret as string;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(secret).not.toBe(firstSecret);

    const sent = await api.post('/webhook-endpoints/test', { endpointId: endpoint.id });
    expect(sent.body.delivery.status).toBe('delivered');
    const [request] = await receiver.waitFor(1);
    expect(request.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
    expect(verifyIndependently(secret, request)).toMatchObject({ type: 'webhook_test' });
    expect(verifyIndependently(firstSecret, request)).toMatchObject({ type: 'webhook_test' });
    // The new signature comes first.
    const [newest] = String(request.headers['webhook-signature']).split(' ');
    expect(() => verifyIndependently(secret, { ...request, headers: { ...request.headers, 'webhook-signature': newest } })).not.toThrow();
    expect(() => verifyIndependently(firstSecret, { ...request, headers: { ...request.headers, 'webhook-signature': newest } })).toThrow();

    // Without an overlap, the previous secret stops verifying at once.
    const again = await api.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, { overlapMinutes: 0 });
    await api.post('/webhook-endpoints/test', { endpointId: endpoint.id });
    const [, last] = await receiver.waitFor(2);
    expect(verifyIndependently(again.body.secret, last)).toMatchObject({ type: 'webhook_test' });
    expect(() => verifyIndependently(secret, last)).toThrow();
  });

  it('keeps service-v1 the default, with secrets that are not for the standard libraries', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const created = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    expect(created.body.webhookEndpoint.signatureScheme).toBe('service-v1');
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const listed = await api.get('/webhook-endpoints');
    expect(listed.body.data.map((e: { signatureScheme: string }) => e.signatureScheme)).toEqual(['service-v1']);
  });

  it.each([['hmac'], [''], [null], [1], ['Standard-Webhooks']])('answers 400 naming signatureScheme for %j', async (signatureScheme) => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const res = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url, signatureScheme });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['signatureScheme']);
  });

  it('fixes the scheme at registration: PATCH refuses it with 400 naming the field', async () => {
    const { api, endpoint } = await standardEndpoint();
    const res = await api.patch(`/webhook-endpoints/${endpoint.id}`, { signatureScheme: 'service-v1' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['signatureScheme']);
    expect((await api.get(`/webhook-endpoints/${endpoint.id}`)).body.webhookEndpoint.signatureScheme).toBe('standard-webhooks');
  });
});
