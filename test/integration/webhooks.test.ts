import { describe, expect, it } from 'vitest';

import { getQueue } from '../../src/queues/queues.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { eventJob } from '../../src/jobs/event-job.js';
import { webhookBackoffStrategy } from '../../src/lib/webhook-backoff.js';
import { destinationNotAllowed, postWebhook } from '../../src/services/webhooks/post-webhook.js';
import { sweepDeliveries } from '../../src/services/webhooks/sweep-deliveries.js';
import { systemActor, transactionWithEvents } from '../../src/services/outbox/outbox.js';
import { processEventInBatch, processEvents } from '../../src/services/event-processing/process-event.js';
import { db } from '../../src/db/client.js';
import { automationRuns, events, webhookDeliveries } from '../../src/db/schema/index.js';
import { eq, inArray, sql } from 'drizzle-orm';
import net, { type AddressInfo } from 'node:net';
import { client, createKey, createTenant, type Tenant } from '../support/harness.js';
import {
  afterAttempt,
  deliveriesOfEvent,
  emitReservationEvent,
  eventIdOf,
  sendSentinel,
  useWebhookPipeline,
  waitForDelivery,
  waitForDispatch,
} from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { expectedSignature, signaturesOf } from '../support/webhook-receiver.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues (another test file's workers must not take these jobs) and a compressed schedule:
// attempt 2 comes 1.2 s after the first failure instead of 1 min.
useOwnQueuePrefix('wh');

const retry = { backoffScale: 0.02 };
const pipeline = useWebhookPipeline({ retry });

/** A tenant with an endpoint (its main destination) and an automation on reservation_created. */
async function setUp(options: { receiverUrl: string; action?: Record<string, unknown>; tenant?: Tenant }) {
  const tenant = options.tenant ?? (await createTenant());
  const api = client(pipeline.url, tenant.key);
  const endpoint = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: options.receiverUrl });
  expect(endpoint.status).toBe(201);
  const automation = await api.post('/automations', {
    venueId: tenant.venueId,
    name: 'Notify the CRM',
    eventTypes: ['reservation_created'],
    action: { type: 'partner_notification', ...options.action },
  });
  expect(automation.status).toBe(201);
  return {
    tenant,
    api,
    endpoint: endpoint.body.webhookEndpoint,
    secret: endpoint.body.secret as string,
    automation: automation.body.automation,
  };
}

describe('webhook delivery', () => {
  it('sends the envelope with the headers of docs/webhooks.md, signed with the endpoint secret', async () => {
    const r = await pipeline.startReceiver();
    const { tenant, api, secret, automation, endpoint } = await setUp({ receiverUrl: r.url });
    const { eventId, reservation } = await emitReservationEvent(tenant);
    const [request] = await r.waitFor(1);

    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['user-agent']).toBe('service-webhook/1');
    const key = String(request.headers['x-service-idempotency-key']);
    expect(key).toMatch(/^automation:[0-9a-f-]{36}:0$/);
    const timestamp = Number(request.headers['x-service-timestamp']);
    expect(Math.abs(timestamp - request.receivedAt / 1000)).toBeLessThan(5);
    // Recomputed with node:crypto only: HMAC-SHA256 keyed with the whole whsec_ string.
    expect(request.headers['x-service-signature']).toBe(`v1=${expectedSignature(secret, request)}`);

    const envelope = JSON.parse(request.body.toString('utf8'));
    expect(Object.keys(envelope)).toEqual(['id', 'eventId', 'type', 'createdAt', 'venueId', 'apiVersion', 'data', 'automation']);
    expect(envelope).toMatchObject({ id: key, eventId, type: 'reservation_created', venueId: tenant.venueId, apiVersion: 'v1' });
    expect(envelope.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(envelope.data.reservation).toEqual(reservation);
    expect(envelope.automation).toEqual({ name: 'Notify the CRM', runId: key.split(':')[1] });

    const delivery = await waitForDelivery(eventId, (d) => d.status === 'delivered');
    expect(delivery.payload).toBe(request.body.toString('utf8'));
    const listed = await api.get(`/webhook-deliveries?automationId=${automation.id}`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({
      id: delivery.id,
      idempotencyKey: key,
      eventId,
      eventType: 'reservation_created',
      venueId: tenant.venueId,
      automationId: automation.id,
      endpointId: endpoint.id,
      url: r.url,
      status: 'delivered',
      attempts: 1,
      lastResponseStatus: 200,
      lastError: null,
      discardReason: null,
      nextAttemptAt: null,
      payload: envelope,
    });
    const byKey = await api.get(`/webhook-deliveries/${encodeURIComponent(key)}`);
    expect(byKey.body.delivery.id).toBe(delivery.id);
    const history = await api.get(`/events?venueId=${tenant.venueId}&type=reservation_created`);
    expect(history.body.data.map((e: { id: string }) => e.id)).toContain(envelope.eventId);
  });

  it('retries a 500 with the same body and key and a new timestamp; the schedule is the production one, scaled', async () => {
    const r = await pipeline.startReceiver((_req, i) => (i === 0 ? 500 : 200));
    const { tenant, secret } = await setUp({ receiverUrl: r.url });
    const { eventId } = await emitReservationEvent(tenant);
    const [first] = await r.waitFor(1);
    const pending = await waitForDelivery(eventId, (d) => d.attempts === 1 && d.lastResponseStatus === 500);
    expect(pending).toMatchObject({ status: 'pending', lastError: 'HTTP 500' });
    // attempt 2 is due 1 minute × the file's backoff scale after the first failure
    expect(pending.nextAttemptAt!.getTime() - pending.lastAttemptAt!.getTime()).toBeGreaterThanOrEqual(60_000 * retry.backoffScale);
    expect(pending.nextAttemptAt!.getTime() - pending.lastAttemptAt!.getTime()).toBeLessThan(60_000 * retry.backoffScale + 1000);
    // The waiting job carries the custom strategy, whose unscaled delays are the production schedule.
    const queue = getQueue(webhookDeliveryJob.queueName);
    expect((await queue.getJob(pending.id))?.opts).toMatchObject({ attempts: 5, backoff: { type: 'webhook' } });
    const webhookBackoff = webhookBackoffStrategy(retry.backoffScale);
    const production = [1, 2, 3, 4, 5].map((failed) => webhookBackoff(failed, 'webhook') / retry.backoffScale);
    expect(production).toEqual([60_000, 300_000, 900_000, 3_600_000, -1 / retry.backoffScale]);

    const [, second] = await r.waitFor(2);
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers['x-service-idempotency-key']).toBe(first.headers['x-service-idempotency-key']);
    expect(Number(second.headers['x-service-timestamp'])).toBeGreaterThan(Number(first.headers['x-service-timestamp']));
    for (const request of [first, second]) expect(signaturesOf(request)).toEqual([expectedSignature(secret, request)]);
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered');
    expect(delivered).toMatchObject({ attempts: 2, lastResponseStatus: 200, lastError: null });
    // The completed job is not kept: the row is the history.
    await eventually(async () => ((await queue.getJob(delivered.id)) ? undefined : true), 5000, 'removal of the completed job');
  }, 30_000);

  it('treats a 3xx as a failure and does not follow it', async () => {
    const r = await pipeline.startReceiver(() => 302);
    const { tenant } = await setUp({ receiverUrl: r.url });
    const { eventId } = await emitReservationEvent(tenant);
    await r.waitFor(1);
    const delivery = await waitForDelivery(eventId, (d) => d.attempts === 1 && d.lastResponseStatus === 302);
    expect(delivery.status).toBe('pending');
    expect(delivery.lastError).toMatch(/redirect/);
    // The next request is the scheduled retry, at its time: nothing was sent in between (a followed
    // redirect, an immediate second attempt).
    const [first, second] = await r.waitFor(2);
    expect(second.headers['x-service-idempotency-key']).toBe(first.headers['x-service-idempotency-key']);
    expect(second.receivedAt).toBeGreaterThanOrEqual(delivery.nextAttemptAt!.getTime());
    await client(pipeline.url, tenant.key).patch(`/automations/${(await deliveriesOfEvent(eventId))[0].automationId}`, {
      status: 'inactive',
    });
  });

  it('redelivers a concluded delivery with the same key and body, and answers 409 while it is pending', async () => {
    const r = await pipeline.startReceiver((_req, i) => (i === 1 ? 'hold' : 200));
    const { tenant, api } = await setUp({ receiverUrl: r.url });
    const { eventId } = await emitReservationEvent(tenant);
    const [first] = await r.waitFor(1);
    const delivered = await waitForDelivery(eventId, (d) => d.status === 'delivered');

    const again = await api.post(`/webhook-deliveries/${delivered.id}/redeliver`);
    expect(again.status).toBe(202);
    expect(again.body.delivery).toMatchObject({ id: delivered.id, status: 'pending', attempts: 0 });
    const [, second] = await r.waitFor(2); // held: the delivery stays pending
    expect(second.body.equals(first.body)).toBe(true);
    expect(second.headers['x-service-idempotency-key']).toBe(first.headers['x-service-idempotency-key']);
    const whilePending = await api.post(`/webhook-deliveries/${delivered.id}/redeliver`);
    expect(whilePending.status).toBe(409);
    expect(whilePending.body.error.code).toBe('conflict');

    r.setPolicy(() => 200);
  }, 30_000);

  it('signs an address written in the action with the organisation secret', async () => {
    const r = await pipeline.startReceiver();
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const rotated = await api.post('/webhook-secret/rotate', { overlapMinutes: 0 });
    expect(rotated.status).toBe(200);
    const automation = await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'To an address',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification', url: r.url },
    });
    expect(automation.status).toBe(201);
    const { eventId } = await emitReservationEvent(tenant);
    const [request] = await r.waitFor(1);
    expect(signaturesOf(request)).toEqual([expectedSignature(rotated.body.secret, request)]);
    const delivery = await waitForDelivery(eventId, (d) => d.status === 'delivered');
    expect(delivery).toMatchObject({ endpointId: null, url: r.url });
  });

  it('fails with a clear error when the venue has no destination, or it is off', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Main',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    const none = await emitReservationEvent(tenant);
    expect((await waitForDelivery(none.eventId, afterAttempt(1))).lastError).toBe('the venue has no webhook endpoint');

    const r = await pipeline.startReceiver();
    const endpoint = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
    await api.patch(`/webhook-endpoints/${endpoint.body.webhookEndpoint.id}`, { isActive: false });
    const off = await emitReservationEvent(tenant);
    const failed = await waitForDelivery(off.eventId, afterAttempt(1));
    expect(failed.lastError).toBe(`webhook endpoint ${endpoint.body.webhookEndpoint.id} is inactive`);
    expect(r.received).toHaveLength(0);
    const automations = await api.get('/automations');
    await api.delete(`/automations/${automations.body.data[0].id}`);
  });

  it('sends nothing for a test organisation', async () => {
    const r = await pipeline.startReceiver();
    const tenant = await createTenant({ test: true });
    const api = client(pipeline.url, tenant.key);
    const endpoint = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
    expect(endpoint.status).toBe(201);
    expect(endpoint.body.livemode).toBe(false);
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Test',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
    });
    const { eventId } = await emitReservationEvent(tenant, { livemode: false });
    await waitForDispatch(eventId);
    expect(await deliveriesOfEvent(eventId)).toEqual([]);
    const test = await api.post('/webhook-endpoints/test', { endpointId: endpoint.body.webhookEndpoint.id });
    expect(test.status).toBe(200);
    expect(test.body.delivery.status).toBe('failed');
    // A live organisation's webhook to the same receiver, set off after all of the above: the only request.
    const live = await setUp({ receiverUrl: r.url });
    const sentinel = await sendSentinel(live.tenant, r);
    expect(r.received.map(eventIdOf)).toEqual([sentinel]);
  });

  it('does not run inactive automations or automations of other event types or unmet conditions', async () => {
    const r = await pipeline.startReceiver();
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
    const base = { venueId: tenant.venueId, action: { type: 'partner_notification' } };
    await api.post('/automations', { ...base, name: 'Inactive', eventTypes: ['reservation_created'], status: 'inactive' });
    await api.post('/automations', { ...base, name: 'Other type', eventTypes: ['reservation_cancelled'] });
    await api.post('/automations', { ...base, name: 'Big parties', eventTypes: ['reservation_created'], conditions: { partySizeMin: 8 } });
    const phone = await api.post('/automations', {
      ...base,
      name: 'Phone',
      eventTypes: ['reservation_created'],
      conditions: { sources: ['phone'] },
    });
    const { eventId } = await emitReservationEvent(tenant);
    await waitForDispatch(eventId);
    expect(await deliveriesOfEvent(eventId)).toEqual([]);

    const { reservation } = await emitReservationEvent(tenant);
    const { eventId: matching } = await emitReservationEvent(tenant, {
      reservation: { ...reservation, id: crypto.randomUUID(), source: 'phone' },
    });
    const delivery = await waitForDelivery(matching, (d) => d.status === 'delivered');
    expect(delivery.automationId).toBe(phone.body.automation.id);
  });
});

describe('current state', () => {
  it('builds the body from the subject’s state at the first attempt and keeps those bytes for the retries', async () => {
    // Guest writes emit their own guest_profile_changed events (guest_created, profile_changed): ours
    // is told apart by its reason.
    const isOurs = (req: { body: Buffer }) => JSON.parse(req.body.toString()).data.reason === 'service_tags_changed';
    let failedOnce = false;
    const r = await pipeline.startReceiver((req) => {
      if (!isOurs(req) || failedOnce) return 200;
      failedOnce = true;
      return 500;
    });
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
    await api.post('/automations', {
      venueId: tenant.venueId,
      name: 'Profiles',
      eventTypes: ['guest_profile_changed'],
      action: { type: 'partner_notification' },
    });
    const created = await api.post('/guests', { venueId: tenant.venueId, phone: '+39 06 1234 5678', firstName: 'Grace' });
    expect(created.status).toBe(201);
    const guest = created.body.guest;
    const renamed = (await api.patch(`/guests/${guest.id}`, { firstName: 'Ada' })).body.guest;

    // The event carries the guest as it was; the webhook carries it as it is at the first attempt.
    await transactionWithEvents(systemActor('test'), async (_tx, emit) => {
      emit({
        organisationId: tenant.organisationId,
        venueId: tenant.venueId,
        livemode: true,
        type: 'guest_profile_changed',
        subjectType: 'guest',
        subjectId: guest.id,
        data: { guest, reason: 'service_tags_changed' },
      });
    });
    const ourRequests = async (n: number) => {
      while (r.received.filter(isOurs).length < n) await r.waitFor(r.received.length + 1);
      return r.received.filter(isOurs);
    };
    const [first] = await ourRequests(1);
    const envelope = JSON.parse(first.body.toString());
    expect(envelope.data).toEqual({ guest: renamed, reason: 'service_tags_changed' });

    await api.patch(`/guests/${guest.id}`, { firstName: 'Hedy' });
    const [, second] = await ourRequests(2);
    expect(second.body.equals(first.body)).toBe(true);
    const history = await api.get('/events?type=guest_profile_changed');
    expect(history.body.data.find((e: { id: string }) => e.id === envelope.eventId).data.guest.firstName).toBe('Grace');
  });
});

describe('exactly once', () => {
  it('processing an event again, even concurrently, creates no second run, delivery or request', async () => {
    const r = await pipeline.startReceiver();
    const { tenant } = await setUp({ receiverUrl: r.url });
    const { eventId } = await emitReservationEvent(tenant);
    await waitForDelivery(eventId, (d) => d.status === 'delivered');
    await db().update(events).set({ dispatchedAt: null }).where(eq(events.id, eventId));
    await Promise.all([
      processEventInBatch({ eventId }, pipeline.config),
      processEventInBatch({ eventId }, pipeline.config),
      processEventInBatch({ eventId }, pipeline.config),
    ]);
    expect(await db().select().from(automationRuns).where(eq(automationRuns.eventId, eventId))).toHaveLength(1);
    expect(await deliveriesOfEvent(eventId)).toHaveLength(1);
    expect((await waitForDispatch(eventId)).dispatchedAt).not.toBeNull();
    const sentinel = await sendSentinel(tenant, r);
    expect(r.received.map(eventIdOf)).toEqual([eventId, sentinel]);
  });

  it('an event that happened before the automation existed, processed after it was created, is not sent', async () => {
    const r = await pipeline.startReceiver();
    const tenant = await createTenant();
    const before = await emitReservationEvent(tenant);
    await waitForDispatch(before.eventId);
    await setUp({ receiverUrl: r.url, tenant });
    const after = await emitReservationEvent(tenant);
    await waitForDelivery(after.eventId, (d) => d.status === 'delivered');
    // As a worker far behind would: the earlier event processed once the automation exists.
    await db().update(events).set({ dispatchedAt: null }).where(eq(events.id, before.eventId));
    await processEventInBatch({ eventId: before.eventId }, pipeline.config);
    expect((await waitForDispatch(before.eventId)).dispatchedAt).not.toBeNull();
    expect(await db().select().from(automationRuns).where(eq(automationRuns.eventId, before.eventId))).toEqual([]);
    expect(await deliveriesOfEvent(before.eventId)).toEqual([]);
    expect(r.received.map((req) => JSON.parse(req.body.toString()).eventId)).toEqual([after.eventId]);
  });

  it('events processed in batches, two overlapping batches at once, get one run, one delivery and one request each', async () => {
    const r = await pipeline.startReceiver();
    const { tenant } = await setUp({ receiverUrl: r.url });
    const other = await setUp({ receiverUrl: r.url });
    const emitted = await Promise.all(Array.from({ length: 12 }, (_, i) => emitReservationEvent(i % 3 ? tenant : other.tenant)));
    const ids = emitted.map((e) => e.eventId);
    await r.waitFor(ids.length);
    await db().update(events).set({ dispatchedAt: null }).where(inArray(events.id, ids));
    await Promise.all([
      processEvents(ids.slice(0, 8), pipeline.config),
      processEvents(ids.slice(4), pipeline.config),
      processEvents([...ids].reverse(), pipeline.config),
    ]);
    const runs = await db().select().from(automationRuns).where(inArray(automationRuns.eventId, ids));
    expect(runs).toHaveLength(ids.length);
    const deliveries = await db().select().from(webhookDeliveries).where(inArray(webhookDeliveries.eventId, ids));
    expect(deliveries).toHaveLength(ids.length);
    expect(new Set(deliveries.map((d) => d.venueId))).toEqual(new Set([tenant.venueId, other.tenant.venueId]));
    expect((await db().select().from(events).where(inArray(events.id, ids))).every((e) => e.dispatchedAt !== null)).toBe(true);
    const sentinel = await sendSentinel(tenant, r);
    const batched = r.received.filter((q) => eventIdOf(q) !== sentinel);
    expect(new Set(batched.map((q) => String(q.headers['x-service-idempotency-key']))).size).toBe(ids.length);
    expect(batched).toHaveLength(ids.length);
  });

  it('the sweeper enqueues a pending delivery whose job Redis lost', async () => {
    const r = await pipeline.startReceiver();
    const { tenant } = await setUp({ receiverUrl: r.url, action: { delayMinutes: 60 } });
    const { eventId } = await emitReservationEvent(tenant);
    const waiting = await waitForDelivery(eventId, () => true);
    const queue = getQueue(webhookDeliveryJob.queueName);
    expect(await (await queue.getJob(waiting.id))?.isDelayed()).toBe(true);
    // Redis loses the job; the row says the attempt is long overdue.
    await queue.remove(waiting.id);
    await db()
      .update(webhookDeliveries)
      .set({ nextAttemptAt: sql`clock_timestamp() - interval '2 minutes'` })
      .where(eq(webhookDeliveries.id, waiting.id));
    expect(await sweepDeliveries(pipeline.config)).toBeGreaterThanOrEqual(1);
    await r.waitFor(1);
    expect((await waitForDelivery(eventId, (d) => d.status === 'delivered')).attempts).toBe(1);
  });
});

describe('destinations', () => {
  it("a delivery goes to the endpoint its automation names, else to its venue's first registered endpoint, never to another venue's: events of two venues processed in one batch", async () => {
    const [first, second, elsewhere] = await Promise.all([pipeline.startReceiver(), pipeline.startReceiver(), pipeline.startReceiver()]);
    const main = await setUp({ receiverUrl: first.url });
    const added = await main.api.post('/webhook-endpoints', { venueId: main.tenant.venueId, url: second.url });
    expect(added.status).toBe(201);
    const named = await main.api.post('/automations', {
      venueId: main.tenant.venueId,
      name: 'Notify the second',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification', endpointId: added.body.webhookEndpoint.id },
    });
    expect(named.status).toBe(201);
    const other = await setUp({ receiverUrl: elsewhere.url });
    // The workers leave these events alone: they are processed together here, in one batch.
    const queue = getQueue(eventJob.queueName);
    await queue.pause();
    let ids: string[];
    try {
      ids = (await Promise.all([emitReservationEvent(main.tenant), emitReservationEvent(other.tenant)])).map((e) => e.eventId);
      expect((await processEvents(ids, pipeline.config)).size).toBe(0);
    } finally {
      await queue.resume();
    }
    const endpointOf = async (eventId: string) =>
      Object.fromEntries((await deliveriesOfEvent(eventId)).map((d) => [d.automationId, d.endpointId]));
    expect(await endpointOf(ids[0])).toEqual({
      [main.automation.id]: main.endpoint.id,
      [named.body.automation.id]: added.body.webhookEndpoint.id,
    });
    expect(await endpointOf(ids[1])).toEqual({ [other.automation.id]: other.endpoint.id });
    expect((await first.waitFor(1)).map(eventIdOf)).toEqual([ids[0]]);
    expect((await second.waitFor(1)).map(eventIdOf)).toEqual([ids[0]]);
    expect((await elsewhere.waitFor(1)).map(eventIdOf)).toEqual([ids[1]]);
  });
});

describe('POST /webhook-endpoints/test', () => {
  it('sends a signed webhook_test now and reports the outcome without keeping it', async () => {
    const r = await pipeline.startReceiver((_req, i) => (i === 0 ? 200 : 503));
    const { api, secret, endpoint, tenant } = await setUp({ receiverUrl: r.url });
    const ok = await api.post('/webhook-endpoints/test', { endpointId: endpoint.id });
    expect(ok.status).toBe(200);
    expect(ok.body.delivery).toMatchObject({ status: 'delivered', responseStatus: 200, error: null });
    expect(ok.body.delivery.durationMs).toBeGreaterThanOrEqual(0);
    const [request] = await r.waitFor(1);
    expect(signaturesOf(request)).toEqual([expectedSignature(secret, request)]);
    expect(JSON.parse(request.body.toString())).toMatchObject({
      type: 'webhook_test',
      venueId: tenant.venueId,
      apiVersion: 'v1',
      data: {},
    });

    const failed = await api.post('/webhook-endpoints/test', { venueId: tenant.venueId, url: r.url });
    expect(failed.body.delivery).toMatchObject({ status: 'failed', responseStatus: 503, error: 'HTTP 503' });
    const listed = await api.get(`/webhook-deliveries?venueId=${tenant.venueId}`);
    expect(listed.body.data).toEqual([]);

    const bad = await api.post('/webhook-endpoints/test', { venueId: tenant.venueId });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(['url']);
  });
});

describe('address check', () => {
  it.each([
    ['loopback', 'http://127.0.0.1:9/x'],
    ['loopback by name', 'http://localhost:9/x'],
    ['IPv6 loopback', 'http://[::1]:9/x'],
    ['private', 'https://10.0.0.1/x'],
    ['link-local (cloud metadata)', 'http://169.254.169.254/latest'],
    ['CGNAT', 'https://100.64.0.1/x'],
    ['IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]:9/x'],
  ])('refuses %s when private targets are not allowed', async (_name, url) => {
    const outcome = await postWebhook({ url, headers: {}, body: Buffer.from('{}'), allowPrivate: false });
    expect(outcome.ok).toBe(false);
    expect(outcome.error).toMatch(/^destination_not_allowed|only https/);
  });

  it('refuses a loopback destination at delivery time when the flag is off, at every attempt', async () => {
    const r = await pipeline.startReceiver();
    // An https address on 127.0.0.1, by name: resolved, checked and refused before any connection.
    const { tenant } = await setUp({ receiverUrl: `https://localhost:${new URL(r.url).port}/hooks` });
    pipeline.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS = false;
    try {
      const { eventId } = await emitReservationEvent(tenant);
      const delivery = await waitForDelivery(eventId, afterAttempt(2));
      expect(delivery.status).toBe('pending');
      expect(delivery.lastError).toBe(destinationNotAllowed);
      expect(r.received).toHaveLength(0);
    } finally {
      pipeline.config.WEBHOOKS_ALLOW_PRIVATE_TARGETS = true;
    }
  }, 30_000);
});

describe('HTTP client', () => {
  it('sends again on a new connection when a kept-alive connection was closed by the receiver', async () => {
    // Answers the first request of each connection and resets the connection on the next one.
    let connections = 0;
    const server = net.createServer((socket) => {
      connections++;
      let requests = 0;
      socket.on('data', () => {
        if (++requests === 1) socket.write('HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n');
        else socket.resetAndDestroy();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const first = await postWebhook({ url, headers: {}, body: Buffer.from('{}'), allowPrivate: true });
      const second = await postWebhook({ url, headers: {}, body: Buffer.from('{}'), allowPrivate: true });
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(connections).toBe(2);
    } finally {
      server.close();
    }
  });

  it('keeps a connection after a short answer, closes it after a long one, and does not resend on a connection that never answered', async () => {
    // Each request's path says how to answer: `short`, `long` (2 KB), `close` (ends the connection without an answer).
    const requests: Array<{ connection: number; path: string }> = [];
    let connections = 0;
    const server = net.createServer((socket) => {
      const connection = ++connections;
      socket.on('data', (data) => {
        // A request's body may come in a chunk of its own: only a request line starts one.
        const path = /^POST (\S+)/.exec(data.toString('latin1'))?.[1];
        if (!path) return;
        requests.push({ connection, path });
        if (path === '/close') socket.end();
        else {
          const body = path === '/long' ? 'x'.repeat(2048) : 'ok';
          socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`);
        }
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const post = (path: string) =>
      postWebhook({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
        headers: {},
        body: Buffer.from('{}'),
        allowPrivate: true,
      });
    try {
      const short = [await post('/short'), await post('/short')];
      expect(short.map((o) => [o.status, o.bodyExcerpt])).toEqual([
        [200, 'ok'],
        [200, 'ok'],
      ]);
      const long = await post('/long');
      expect([long.status, long.bodyExcerpt?.length]).toEqual([200, 1024]);
      // The next request opens a new connection, which ends without an answer: a failed attempt, not
      // sent again (only a reused connection may have been closed just before the request reached it).
      const closed = await post('/close');
      expect(closed).toMatchObject({ ok: false, status: null, error: 'connection failed (ECONNRESET)' });
      expect((await post('/short')).status).toBe(200);
      expect(requests).toEqual([
        { connection: 1, path: '/short' },
        { connection: 1, path: '/short' },
        { connection: 1, path: '/long' },
        { connection: 2, path: '/close' },
        { connection: 3, path: '/short' },
      ]);
    } finally {
      server.close();
    }
  });

  it('gives up after 10 s without an answer', async () => {
    const r = await pipeline.startReceiver(() => 'hold');
    const outcome = await postWebhook({ url: r.url, headers: {}, body: Buffer.from('{}'), allowPrivate: true, timeoutMs: 300 });
    expect(outcome).toMatchObject({ ok: false, status: null, error: 'no answer within 0.3 s' });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(290);
  });
});

describe('webhook endpoints API', () => {
  it('creates, lists, reads, changes and deletes endpoints with the shape of docs/api.md', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const created = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: 'https://partner.example.com/hooks' });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const endpoint = created.body.webhookEndpoint;
    expect(Object.keys(endpoint).sort()).toEqual([
      'createdAt',
      'health',
      'id',
      'isActive',
      'previousSecretExpiresAt',
      'secretVersion',
      'signatureScheme',
      'updatedAt',
      'url',
      'venueId',
    ]);
    expect(endpoint).toMatchObject({
      venueId: tenant.venueId,
      url: 'https://partner.example.com/hooks',
      isActive: true,
      secretVersion: 1,
      signatureScheme: 'service-v1',
    });
    expect(endpoint.health).toEqual({
      state: 'healthy',
      consecutiveFailures: 0,
      failingSince: null,
      lastSuccessAt: null,
      disabledAt: null,
    });
    expect(JSON.stringify(endpoint)).not.toContain('whsec_');

    const other = await createTenant();
    await client(pipeline.url, other.key).post('/webhook-endpoints', { venueId: other.venueId, url: 'https://other.example.com/' });
    const list = await api.get(`/webhook-endpoints?venueId=${tenant.venueId}`);
    expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpoint.id]);
    expect((await api.get('/webhook-endpoints')).body.data).toHaveLength(1);
    expect((await client(pipeline.url, other.key).get(`/webhook-endpoints/${endpoint.id}`)).status).toBe(404);

    const read = await api.get(`/webhook-endpoints/${endpoint.id}`);
    expect(read.body.webhookEndpoint).toEqual(endpoint);
    const patched = await api.patch(`/webhook-endpoints/${endpoint.id}`, { isActive: false, url: 'https://partner.example.com/v2' });
    expect(patched.body.webhookEndpoint).toMatchObject({ isActive: false, url: 'https://partner.example.com/v2' });
    expect(patched.body.webhookEndpoint.updatedAt > endpoint.updatedAt).toBe(true);
    expect((await api.delete(`/webhook-endpoints/${endpoint.id}`)).status).toBe(204);
    expect((await api.get(`/webhook-endpoints/${endpoint.id}`)).status).toBe(404);
  });

  it.each([
    [{ url: 'https://x.example/' }, ['venueId']],
    [{ venueId: 'nope', url: 'https://x.example/' }, ['venueId']],
    [{ url: 'ftp://x.example/' }, ['venueId', 'url']],
    [{ url: 'https://user:pw@x.example/' }, ['venueId', 'url']],
    [{ url: 'https://x.example/', extra: 1 }, ['venueId', 'extra']],
  ])('answers 400 naming the fields for %j', async (body, fields) => {
    const tenant = await createTenant();
    const res = await client(pipeline.url, tenant.key).post('/webhook-endpoints', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.fields.sort()).toEqual([...fields].sort());
  });

  it('needs webhooks:read to read and webhooks:write to write; other venues answer 404', async () => {
    const tenant = await createTenant();
    const reader = await createKey(tenant.organisationId, { scopes: ['webhooks:read'] });
    const denied = await client(pipeline.url, reader).post('/webhook-endpoints', { venueId: tenant.venueId, url: 'https://x.example/' });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.requiredScope).toBe('webhooks:write');
    const none = await createKey(tenant.organisationId, { scopes: ['reservations:read'] });
    expect((await client(pipeline.url, none).get('/webhook-endpoints')).body.error.details.requiredScope).toBe('webhooks:read');
    const other = await createTenant();
    const res = await client(pipeline.url, other.key).post('/webhook-endpoints', { venueId: tenant.venueId, url: 'https://x.example/' });
    expect(res.status).toBe(404);
  });
});

describe('GET /webhook-deliveries', () => {
  it('filters the payload by the reader’s scopes and by status, event type and endpoint', async () => {
    const r = await pipeline.startReceiver();
    const { tenant, endpoint, automation } = await setUp({ receiverUrl: r.url });
    const { eventId, reservation } = await emitReservationEvent(tenant);
    await waitForDelivery(eventId, (d) => d.status === 'delivered');

    const read = async (scopes: string[], query = '') =>
      (await client(pipeline.url, await createKey(tenant.organisationId, { scopes })).get(`/webhook-deliveries${query}`)).body.data;
    const full = await read(['webhooks:read', 'reservations:read', 'guests:read']);
    expect(full[0].payload.data.reservation).toEqual(reservation);
    const noGuests = await read(['webhooks:read', 'reservations:read']);
    expect(noGuests[0].payload.data.reservation.guest).toEqual({ id: reservation.guestId });
    expect(noGuests[0].payload.data.reservation.guestDetails).toEqual({ id: reservation.guestId });
    expect(noGuests[0].payload.data.reservation.partySize).toBe(4);
    const viaEvents = await read(['webhooks:read', 'events:read', 'guests:read']);
    expect(viaEvents[0].payload.data.reservation).toEqual(reservation);
    const bare = await read(['webhooks:read']);
    expect(bare[0].payload.data.reservation).toBeNull();

    expect(await read(['webhooks:read'], '?status=discarded')).toEqual([]);
    expect(await read(['webhooks:read'], '?status=delivered&eventType=reservation_created')).toHaveLength(1);
    expect(await read(['webhooks:read'], '?eventType=reservation_cancelled')).toEqual([]);
    expect(await read(['webhooks:read'], `?endpointId=${endpoint.id}&automationId=${automation.id}`)).toHaveLength(1);
    const bad = await client(pipeline.url, tenant.key).get('/webhook-deliveries?status=lost');
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(['status']);
    expect((await client(pipeline.url, tenant.key).get('/webhook-deliveries/not-an-id')).status).toBe(404);
  });
});
