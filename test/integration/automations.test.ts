import { describe, expect, it } from 'vitest';

import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { client, createKey, createTenant } from '../support/harness.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues, and attempt 2 three seconds after the first failure: time to deactivate in between.
useOwnQueuePrefix('aut');

const pipeline = useWebhookPipeline({ retry: { backoffScale: 0.05 }, policy: () => 500 });

const action = { type: 'partner_notification' };

/** The requests the receiver got for one event's delivery. */
const attemptsReceived = (eventId: string) =>
  pipeline.receiver.received.filter((r) => JSON.parse(r.body.toString()).eventId === eventId).length;

describe('automations API', () => {
  it('creates, reads, lists, changes and archives an automation', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const created = await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Large parties to the CRM',
      eventTypes: ['reservation_created', 'reservation_cancelled'],
      conditions: { partySizeMin: 6, sources: ['phone', 'api'] },
      action: { ...action, url: 'https://crm.example.com/hooks', delayMinutes: 5 },
    });
    expect(created.status).toBe(201);
    const automation = created.body.automation;
    expect(automation).toEqual({
      id: expect.any(String),
      venueId: tenant.venueId,
      name: 'Large parties to the CRM',
      eventTypes: ['reservation_created', 'reservation_cancelled'],
      conditions: { partySizeMin: 6, partySizeMax: null, sources: ['phone', 'api'] },
      action: { type: 'partner_notification', url: 'https://crm.example.com/hooks', endpointId: null, delayMinutes: 5 },
      status: 'active',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect((await api.get(`/automations/${automation.id}`)).body.automation).toEqual(automation);

    const patched = await api.patch(`/automations/${automation.id}`, {
      name: 'Renamed',
      status: 'inactive',
      conditions: { partySizeMax: 10 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.automation).toMatchObject({
      name: 'Renamed',
      status: 'inactive',
      conditions: { partySizeMin: null, partySizeMax: 10, sources: null },
    });
    expect(patched.body.automation.updatedAt > automation.updatedAt).toBe(true);

    const second = await api.post('/automations', { venueId: tenant.venueId, name: 'Second', eventTypes: ['guest_seated'], action });
    const list = await api.get(`/automations?venueId=${tenant.venueId}&limit=1`);
    expect(list.body.data.map((a: { id: string }) => a.id)).toEqual([automation.id]);
    const page2 = await api.get(`/automations?venueId=${tenant.venueId}&limit=1&cursor=${list.body.nextCursor}`);
    expect(page2.body.data.map((a: { id: string }) => a.id)).toEqual([second.body.automation.id]);

    const archived = await api.delete(`/automations/${automation.id}`);
    expect(archived.status).toBe(200);
    expect(archived.body.automation).toMatchObject({ id: automation.id, status: 'archived' });
    expect((await api.delete(`/automations/${automation.id}`)).body.automation.status).toBe('archived');
    expect((await api.get(`/automations/${automation.id}`)).body.automation.status).toBe('archived');
    expect((await api.get('/automations')).body.data.map((a: { id: string }) => a.id)).toEqual([second.body.automation.id]);
    expect((await api.get('/automations?status=archived')).body.data.map((a: { id: string }) => a.id)).toEqual([automation.id]);
    const reactivate = await api.patch(`/automations/${automation.id}`, { status: 'active' });
    expect(reactivate.status).toBe(400);
    expect(reactivate.body.error.details).toMatchObject({ fields: ['status'], reason: 'automation_archived' });
  });

  it.each([
    ['an unknown event type', { eventTypes: ['table_exploded'] }, ['eventTypes.0']],
    ['webhook_test as a trigger', { eventTypes: ['webhook_test'] }, ['eventTypes.0']],
    ['no event type', { eventTypes: [] }, ['eventTypes']],
    ['a repeated event type', { eventTypes: ['guest_seated', 'guest_seated'] }, ['eventTypes']],
    ['an unknown action type', { action: { type: 'sms' } }, ['action.type']],
    [
      'both url and endpointId',
      { action: { ...action, url: 'https://a.example/', endpointId: crypto.randomUUID() } },
      ['action.url', 'action.endpointId'],
    ],
    ['a delay over one week', { action: { ...action, delayMinutes: 10081 } }, ['action.delayMinutes']],
    [
      'a party size range upside down',
      { conditions: { partySizeMin: 8, partySizeMax: 2 } },
      ['conditions.partySizeMin', 'conditions.partySizeMax'],
    ],
    ['an unknown source', { conditions: { sources: ['fax'] } }, ['conditions.sources.0']],
    ['an unknown condition', { conditions: { minute: 1 } }, ['conditions.minute']],
    ['an endpoint of no venue', { action: { ...action, endpointId: crypto.randomUUID() } }, ['action.endpointId']],
  ])('answers 400 for %s', async (_name, override, fields) => {
    const tenant = await createTenant();
    const res = await client(pipeline.url, tenant.key).post('/automations', {
      venueId: tenant.venueId,
      name: 'x',
      eventTypes: ['reservation_created'],
      action,
      ...override,
    });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.fields).toEqual(fields);
  });

  it('keeps automations within the organisation and the key’s venues and scopes', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const created = await api.post('/automations', { venueId: tenant.venueId, name: 'Mine', eventTypes: ['reservation_created'], action });
    const other = await createTenant();
    const otherApi = client(pipeline.url, other.key);
    expect((await otherApi.get(`/automations/${created.body.automation.id}`)).status).toBe(404);
    expect((await otherApi.delete(`/automations/${created.body.automation.id}`)).status).toBe(404);
    expect(
      (await otherApi.post('/automations', { venueId: tenant.venueId, name: 'x', eventTypes: ['reservation_created'], action })).status,
    ).toBe(404);
    const otherEndpoint = await otherApi.post('/webhook-endpoints', { venueId: other.venueId, url: pipeline.receiver.url });
    const foreign = await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'x',
      eventTypes: ['reservation_created'],
      action: { ...action, endpointId: otherEndpoint.body.webhookEndpoint.id },
    });
    expect(foreign.status).toBe(400);

    const reader = await createKey(tenant.organisationId, { scopes: ['webhooks:read'] });
    expect((await client(pipeline.url, reader).get('/automations')).body.data).toHaveLength(1);
    const denied = await client(pipeline.url, reader).patch(`/automations/${created.body.automation.id}`, { name: 'y' });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.requiredScope).toBe('webhooks:write');
  });
});

describe('deactivating or archiving an automation', () => {
  async function failingDelivery(tenantAction: Record<string, unknown> = action) {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url });
    const automation = (
      await api.post('/automations', {
        venueId: tenant.venueId,
        name: 'Failing',
        eventTypes: ['reservation_created'],
        action: tenantAction,
      })
    ).body.automation;
    const { eventId } = await emitReservationEvent(tenant);
    return { api, automation, eventId };
  }

  it.each([
    ['deactivating', (api: ReturnType<typeof client>, id: string) => api.patch(`/automations/${id}`, { status: 'inactive' })],
    ['archiving', (api: ReturnType<typeof client>, id: string) => api.delete(`/automations/${id}`)],
  ])(
    '%s discards the deliveries waiting for a retry and removes their jobs',
    async (_name, stop) => {
      const { api, automation, eventId } = await failingDelivery();
      const waiting = await waitForDelivery(eventId, (d) => d.attempts === 1 && d.lastResponseStatus === 500);
      expect(waiting.status).toBe('pending');
      const requestsBefore = attemptsReceived(eventId);
      expect((await stop(api, automation.id)).status).toBe(200);
      // Another automation's delivery, failing after the stop: its attempt 2 falls due after the stopped one's would have.
      const later = await failingDelivery();

      const listed = (await api.get(`/webhook-deliveries?automationId=${automation.id}`)).body.data;
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({
        id: waiting.id,
        status: 'discarded',
        discardReason: 'automation_inactive',
        attempts: 1,
        nextAttemptAt: null,
      });
      expect(await getQueue(webhookDeliveryJob.queueName).getJob(waiting.id)).toBeUndefined();
      // Attempt 2 was due 3 s after the failure: it never comes, although the later delivery's attempt 2 has been made.
      // Counted where it arrives: the row counts an attempt when it is claimed, before it is sent.
      await eventually(async () => attemptsReceived(later.eventId) >= 2, 20_000, "the later delivery's attempt 2 received");
      expect(attemptsReceived(eventId)).toBe(requestsBefore);
    },
    30_000,
  );

  it('also annuls a first attempt still waiting for the action’s delay', async () => {
    const { api, automation, eventId } = await failingDelivery({ ...action, delayMinutes: 30 });
    const waiting = await waitForDelivery(eventId, () => true);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0 });
    expect(waiting.nextAttemptAt!.getTime() - waiting.createdAt.getTime()).toBeGreaterThan(29 * 60_000);
    expect(await (await getQueue(webhookDeliveryJob.queueName).getJob(waiting.id))?.isDelayed()).toBe(true);
    await api.patch(`/automations/${automation.id}`, { status: 'inactive' });
    expect((await waitForDelivery(eventId, () => true)).discardReason).toBe('automation_inactive');
    expect(await getQueue(webhookDeliveryJob.queueName).getJob(waiting.id)).toBeUndefined();
  });
});
