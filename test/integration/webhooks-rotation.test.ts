import { describe, expect, it } from 'vitest';

import { inArray } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { idempotencyKeys } from '../../src/db/schema/index.js';
import { client, createKey, createTenant } from '../support/harness.js';
import { emitReservationEvent, useWebhookPipeline } from '../support/webhook-fixtures.js';
import { expectedSignature, signaturesOf } from '../support/webhook-receiver.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

useOwnQueuePrefix('rot');

const pipeline = useWebhookPipeline();

const minutesFromNow = (iso: string) => (new Date(iso).getTime() - Date.now()) / 60_000;

async function endpointSetUp() {
  const tenant = await createTenant();
  const api = client(pipeline.url, tenant.key);
  const created = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
  return { tenant, api, endpointId: created.body.webhookEndpoint.id as string, firstSecret: created.body.secret as string };
}

/** Sends a webhook_test to the endpoint and returns the request as the receiver got it. */
async function sendTest(api: ReturnType<typeof client>, endpointId: string) {
  const before = pipeline.receiver.received.length;
  const res = await api.post('/webhook-endpoints/test', { endpointId });
  expect(res.body.delivery.status).toBe('delivered');
  return (await pipeline.receiver.waitFor(before + 1))[before];
}

describe('endpoint secret rotation', () => {
  it('signs with the new and the previous secret during the overlap (default one day)', async () => {
    const { api, endpointId, firstSecret } = await endpointSetUp();
    const rotated = await api.post(`/webhook-endpoints/${endpointId}/rotate-secret`, {});
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body).sort()).toEqual(['livemode', 'previousSecretExpiresAt', 'secret', 'secretVersion']);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(firstSecret);
    expect(rotated.body.secretVersion).toBe(2);
    expect(minutesFromNow(rotated.body.previousSecretExpiresAt)).toBeCloseTo(1440, 0);

    const request = await sendTest(api, endpointId);
    expect(request.headers['x-service-signature']).toMatch(/^v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(signaturesOf(request)).toEqual([expectedSignature(rotated.body.secret, request), expectedSignature(firstSecret, request)]);

    const endpoint = (await api.get(`/webhook-endpoints/${endpointId}`)).body.webhookEndpoint;
    expect(endpoint).toMatchObject({ secretVersion: 2, previousSecretExpiresAt: rotated.body.previousSecretExpiresAt });
  });

  it('with overlapMinutes 0 only the new secret signs', async () => {
    const { api, endpointId } = await endpointSetUp();
    const rotated = await api.post(`/webhook-endpoints/${endpointId}/rotate-secret`, { overlapMinutes: 0 });
    expect(rotated.status).toBe(200);
    expect(minutesFromNow(rotated.body.previousSecretExpiresAt)).toBeLessThanOrEqual(0);
    const request = await sendTest(api, endpointId);
    expect(signaturesOf(request)).toEqual([expectedSignature(rotated.body.secret, request)]);
  });

  it('a rotation during an overlap keeps the older previous version; the intermediate one stops signing (rule 4)', async () => {
    const { api, endpointId, firstSecret } = await endpointSetUp();
    const second = await api.post(`/webhook-endpoints/${endpointId}/rotate-secret`, { overlapMinutes: 60 });
    const third = await api.post(`/webhook-endpoints/${endpointId}/rotate-secret`, { overlapMinutes: 30 });
    expect(third.body.secretVersion).toBe(3);
    expect(minutesFromNow(third.body.previousSecretExpiresAt)).toBeCloseTo(30, 0);
    const request = await sendTest(api, endpointId);
    expect(signaturesOf(request)).toEqual([expectedSignature(third.body.secret, request), expectedSignature(firstSecret, request)]);
    expect(signaturesOf(request)).not.toContain(expectedSignature(second.body.secret, request));
  });

  it('the same Idempotency-Key returns the same secret, and 409 without a secret once rotated again (rule 5)', async () => {
    const { api, endpointId } = await endpointSetUp();
    const headers = { 'idempotency-key': `rotate-${crypto.randomUUID()}` };
    const path = `/webhook-endpoints/${endpointId}/rotate-secret`;
    const first = await api.post(path, { overlapMinutes: 10 }, headers);
    expect(first.status).toBe(200);
    const replay = await api.post(path, { overlapMinutes: 10 }, headers);
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await api.get(`/webhook-endpoints/${endpointId}`)).body.webhookEndpoint.secretVersion).toBe(2);

    const otherBody = await api.post(path, { overlapMinutes: 11 }, headers);
    expect(otherBody.status).toBe(422);
    expect(otherBody.body.error.code).toBe('idempotency_key_reused');

    const newer = await api.post(path, { overlapMinutes: 10 });
    expect(newer.body.secretVersion).toBe(3);
    const superseded = await api.post(path, { overlapMinutes: 10 }, headers);
    expect(superseded.status).toBe(409);
    expect(superseded.body.error.code).toBe('conflict');
    expect(superseded.text).not.toContain('whsec_');
    expect(superseded.text).not.toContain(first.body.secret);
  });

  it('never keeps a secret in clear in the shared idempotency store; endpoint creation replays like a rotation', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const key = `create-${crypto.randomUUID()}`;
    const body = { venueId: tenant.venueId, url: pipeline.receiver.url };
    const created = await api.post('/webhook-endpoints', body, { 'idempotency-key': key });
    expect(created.status).toBe(201);
    const replay = await api.post('/webhook-endpoints', body, { 'idempotency-key': key });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.webhookEndpoint.id).toBe(created.body.webhookEndpoint.id);
    expect(replay.body.secret).toBe(created.body.secret);
    expect((await api.get('/webhook-endpoints')).body.data).toHaveLength(1);

    const endpointId = created.body.webhookEndpoint.id;
    const rotationKey = `rotate-${crypto.randomUUID()}`;
    const rotated = await api.post(
      `/webhook-endpoints/${endpointId}/rotate-secret`,
      { overlapMinutes: 0 },
      { 'idempotency-key': rotationKey },
    );
    const stored = await db()
      .select()
      .from(idempotencyKeys)
      .where(inArray(idempotencyKeys.key, [key, rotationKey]));
    expect(stored).toHaveLength(2);
    for (const row of stored) {
      expect(row.responseBody).not.toContain(created.body.secret);
      expect(row.responseBody).not.toContain(rotated.body.secret);
    }
    const superseded = await api.post('/webhook-endpoints', body, { 'idempotency-key': key });
    expect(superseded.status).toBe(409);
    expect(superseded.text).not.toContain('whsec_');
  });

  it.each([[{ overlapMinutes: -1 }], [{ overlapMinutes: 10081 }], [{ overlapMinutes: 1.5 }], [{ overlapMinutes: '60' }], [{ overlap: 5 }]])(
    'answers 400 for %j',
    async (body) => {
      const { api, endpointId } = await endpointSetUp();
      const res = await api.post(`/webhook-endpoints/${endpointId}/rotate-secret`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields).toEqual([Object.keys(body)[0]]);
    },
  );

  it('another organisation’s endpoint is not found', async () => {
    const { endpointId } = await endpointSetUp();
    const other = await createTenant();
    expect((await client(pipeline.url, other.key).post(`/webhook-endpoints/${endpointId}/rotate-secret`, {})).status).toBe(404);
  });
});

describe('organisation secret rotation', () => {
  it('is refused to a key limited to certain venues', async () => {
    const tenant = await createTenant();
    const limited = await createKey(tenant.organisationId, { venueIds: [tenant.venueId] });
    const res = await client(pipeline.url, limited).post('/webhook-secret/rotate', {});
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it('replaces the initial unreadable version; addresses in actions are signed with both during the overlap', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Address',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification', url: pipeline.receiver.url },
    });
    const before = pipeline.receiver.received.length;
    await emitReservationEvent(tenant);
    const [initial] = (await pipeline.receiver.waitFor(before + 1)).slice(before);
    expect(signaturesOf(initial)).toHaveLength(1);

    const headers = { 'idempotency-key': `org-${crypto.randomUUID()}` };
    const rotated = await api.post('/webhook-secret/rotate', { overlapMinutes: 120 }, headers);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secretVersion).toBe(2);
    expect(minutesFromNow(rotated.body.previousSecretExpiresAt)).toBeCloseTo(120, 0);
    expect((await api.post('/webhook-secret/rotate', { overlapMinutes: 120 }, headers)).body.secret).toBe(rotated.body.secret);

    await emitReservationEvent(tenant);
    const [request] = (await pipeline.receiver.waitFor(before + 2)).slice(before + 1);
    const [newest, previous] = signaturesOf(request);
    expect(newest).toBe(expectedSignature(rotated.body.secret, request));
    expect(previous).toMatch(/^[0-9a-f]{64}$/);
    expect(previous).not.toBe(newest);

    // Endpoint secrets are not touched by the organisation rotation.
    const endpoint = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    await api.post('/webhook-secret/rotate', { overlapMinutes: 0 });
    expect((await api.get(`/webhook-endpoints/${endpoint.body.webhookEndpoint.id}`)).body.webhookEndpoint.secretVersion).toBe(1);
    expect((await api.post('/webhook-secret/rotate', { overlapMinutes: 120 }, headers)).status).toBe(409);
  });
});
