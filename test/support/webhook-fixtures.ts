import { randomUUID } from 'node:crypto';
import { and, desc, eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Config } from '../../src/config.js';
import { db } from '../../src/db/client.js';
import { automations, events, organisations, webhookDeliveries } from '../../src/db/schema/index.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { closeQueues, getQueue } from '../../src/queues/queues.js';
import { startEventsRole } from '../../src/roles/events.js';
import { startWebhooksRole } from '../../src/roles/webhooks.js';
import type { EventType } from '../../src/lib/event-catalogue.js';
import type { RetrySchedule } from '../../src/lib/webhook-backoff.js';
import { systemActor, transactionWithEvents } from '../../src/services/outbox/outbox.js';
import { client, createKey, startTestServer, testConfig, type Client, type TestServer } from './harness.js';
import { eventually } from './eventually.js';
import { startWebhookReceiver, type ReceivedWebhook, type ReceiverPolicy, type WebhookReceiver } from './webhook-receiver.js';

export interface WebhookPipeline {
  /** The URL of the API server. */
  url: string;
  /** A receiver started with the file, answering with the given policy. */
  receiver: WebhookReceiver;
  /** Another receiver, closed with the others after the file. */
  startReceiver: (policy?: ReceiverPolicy) => Promise<WebhookReceiver>;
  /** The configuration the server and the webhook role were built with: both read WEBHOOKS_ALLOW_PRIVATE_TARGETS at every send. */
  config: Config;
}

/**
 * The webhook pipeline of a test file, in this process: registers the hooks that start the API
 * server, a receiver (answering with `policy`, 200 by default), worker-events and worker-webhooks
 * (unless `webhooksRole: false`, for a file that runs it as its own process; its retry waits scaled by
 * `retry`, the real schedule by default), and that stop them all after the file. The server and the
 * webhook role are built with `config` (the run's by default). The url and receiver are set once beforeAll has run.
 */
export function useWebhookPipeline(
  options: { policy?: ReceiverPolicy; webhooksRole?: boolean; retry?: RetrySchedule; config?: Config } = {},
): WebhookPipeline {
  let server: TestServer | undefined;
  const receivers: WebhookReceiver[] = [];
  const stopRoles: Array<() => Promise<void>> = [];
  const pipeline = {
    config: options.config ?? testConfig(),
    startReceiver: async (policy?: ReceiverPolicy) => {
      const receiver = await startWebhookReceiver(policy);
      receivers.push(receiver);
      return receiver;
    },
  } as WebhookPipeline;
  beforeAll(async () => {
    server = await startTestServer({ config: pipeline.config });
    pipeline.url = server.url;
    pipeline.receiver = await pipeline.startReceiver(options.policy);
    stopRoles.push(await startEventsRole(pipeline.config));
    if (options.webhooksRole !== false) stopRoles.push(await startWebhooksRole(pipeline.config, options.retry));
  });
  afterAll(async () => {
    // Receivers first: a request they hold would keep its worker from stopping.
    await Promise.all(receivers.map((r) => r.close()));
    for (const stop of stopRoles.reverse()) await stop();
    if (server) await concludeDeliveriesInFlight(server.url);
    await closeQueues();
    await server?.close();
  });
  return pipeline;
}

/**
 * Concludes what the file leaves in flight, as an operator would: retries scheduled minutes ahead,
 * the backlog of a saturated destination. Once the file's workers are gone nothing attempts them,
 * and the invariant check after the suite would count them overdue. Each automation whose pending
 * deliveries all have a job in this file's queues is archived through the API, which annuls them
 * (docs/webhooks.md). An automation with a pending delivery that has no job is left as it is: the
 * check after the suite counts that delivery (pendingDeliveriesWithoutJob), as it should.
 */
async function concludeDeliveriesInFlight(apiUrl: string): Promise<void> {
  const jobs = await getQueue(webhookDeliveryJob.queueName).getJobs(['waiting', 'prioritized', 'delayed', 'active', 'waiting-children']);
  const inFlight = new Set(jobs.map((job) => job.id));
  if (!inFlight.size) return;
  const automationsInFlight = db()
    .selectDistinct({ id: webhookDeliveries.automationId })
    .from(webhookDeliveries)
    .where(and(inArray(webhookDeliveries.id, [...inFlight] as string[]), eq(webhookDeliveries.status, 'pending')));
  const pending = await db()
    .select({ id: webhookDeliveries.id, automationId: webhookDeliveries.automationId })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.status, 'pending'), inArray(webhookDeliveries.automationId, automationsInFlight)));
  const byAutomation = new Map<string, typeof pending>();
  for (const d of pending) byAutomation.set(d.automationId, [...(byAutomation.get(d.automationId) ?? []), d]);
  const complete = [...byAutomation].filter(([, deliveries]) => deliveries.every((d) => inFlight.has(d.id))).map(([id]) => id);
  await archiveAutomations(apiUrl, complete);
}

/**
 * Archives these automations through the API of `apiUrl` (docs/webhooks.md: their pending
 * deliveries are annulled), each with a key of its organisation made for the purpose: what a file
 * does with the deliveries it leaves in flight once nothing will attempt them.
 */
export async function archiveAutomations(apiUrl: string, automationIds: readonly string[]): Promise<void> {
  if (!automationIds.length) return;
  const rows = await db()
    .select({ id: automations.id, organisationId: automations.organisationId, isTest: organisations.isTest })
    .from(automations)
    .innerJoin(organisations, eq(organisations.id, automations.organisationId))
    .where(inArray(automations.id, [...automationIds]));
  const keys = new Map<string, Promise<string>>();
  for (const { id, organisationId, isTest } of rows) {
    if (!keys.has(organisationId))
      keys.set(organisationId, createKey(organisationId, { kind: isTest ? 'test' : 'live', name: 'file teardown' }));
    const archived = await client(apiUrl, await keys.get(organisationId)).delete(`/automations/${id}`);
    if (archived.status !== 200)
      throw new Error(`archiving automation ${id} at the end of the file answered ${archived.status}: ${archived.text}`);
  }
}

/**
 * A venue's partner, through the API: its webhook endpoint at `url` and an automation (`name`)
 * sending it every `reservation_created`. Returns the endpoint's id.
 */
export async function subscribePartner(api: Client, venueId: string, url: string, name = 'Partner'): Promise<string> {
  const created = await api.post('/webhook-endpoints', { venueId, url });
  expect(created.status, created.text).toBe(201);
  const automation = await api.post('/automations', {
    venueId,
    name,
    eventTypes: ['reservation_created'],
    action: { type: 'partner_notification' },
  });
  expect(automation.status, automation.text).toBe(201);
  return created.body.webhookEndpoint.id as string;
}

/** A reservation in the v1 response shape, as the reservation engine will emit it. */
export function plausibleReservation(venueId: string, overrides: Record<string, unknown> = {}) {
  const startsAt = new Date(Date.now() + 2 * 24 * 3600_000);
  startsAt.setUTCHours(18, 0, 0, 0);
  const guestId = randomUUID();
  return {
    id: randomUUID(),
    venueId,
    serviceDate: startsAt.toISOString().slice(0, 10),
    time: '20:00',
    startsAt: startsAt.toISOString(),
    endsAt: new Date(startsAt.getTime() + 2 * 3600_000).toISOString(),
    partySize: 4,
    status: 'confirmed',
    tableAssigned: true,
    tableLocked: false,
    needsAttention: false,
    notes: 'Window seat, birthday',
    source: 'api',
    sourceDetail: 'test key',
    externalRef: null,
    guestId,
    updatedAt: new Date().toISOString(),
    guest: { name: 'Ada Lovelace', allergies: 'shellfish', allergens: ['crustaceans'] },
    guestDetails: {
      id: guestId,
      phone: '+390612345678',
      email: 'ada@example.com',
      firstName: 'Ada',
      lastName: 'Lovelace',
      name: 'Ada Lovelace',
      allergies: 'shellfish',
      allergens: ['crustaceans'],
      notes: null,
      visitCount: 3,
      noShowCount: 0,
      externalRef: null,
      updatedAt: new Date().toISOString(),
    },
    table: null,
    ...overrides,
  };
}

/** Emits a reservation event through the outbox, as a domain change would, and returns its id. */
export async function emitReservationEvent(
  tenant: { organisationId: string; venueId: string },
  options: { type?: EventType; livemode?: boolean; reservation?: ReturnType<typeof plausibleReservation> } = {},
) {
  const reservation = options.reservation ?? plausibleReservation(tenant.venueId);
  await transactionWithEvents(systemActor('test'), async (_tx, emit) => {
    emit({
      organisationId: tenant.organisationId,
      venueId: tenant.venueId,
      livemode: options.livemode ?? true,
      type: options.type ?? 'reservation_created',
      subjectType: 'reservation',
      subjectId: reservation.id,
      data: { reservation },
    });
  });
  const [event] = await db().select().from(events).where(eq(events.subjectId, reservation.id)).orderBy(desc(events.createdAt)).limit(1);
  return { eventId: event.id, reservation };
}

export async function deliveriesOfEvent(eventId: string) {
  return db().select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
}

/** Waits for the single delivery of an event to reach a state. */
export async function waitForDelivery(eventId: string, accept: (d: typeof webhookDeliveries.$inferSelect) => boolean, timeoutMs = 20_000) {
  return eventually(
    async () => {
      const [delivery] = await db()
        .select()
        .from(webhookDeliveries)
        .where(and(eq(webhookDeliveries.eventId, eventId)));
      return delivery && accept(delivery) ? delivery : undefined;
    },
    timeoutMs,
    `delivery of event ${eventId}`,
  );
}

export async function waitForDispatch(eventId: string) {
  return eventually(
    async () => {
      const [event] = await db().select().from(events).where(eq(events.id, eventId));
      return event?.dispatchedAt ? event : undefined;
    },
    20_000,
    `dispatch of event ${eventId}`,
  );
}

/** The delivery has had `n` attempts and the outcome of the last one is recorded (an attempt under way is counted first). */
export const afterAttempt = (n: number) => (d: typeof webhookDeliveries.$inferSelect) =>
  d.attempts === n &&
  (d.status !== 'pending' || (d.nextAttemptAt !== null && d.lastAttemptAt !== null && d.nextAttemptAt > d.lastAttemptAt));

/** The event id of a webhook's envelope. */
export const eventIdOf = (request: ReceivedWebhook): string => JSON.parse(request.body.toString('utf8')).eventId;

/**
 * A sentinel for "nothing more arrives": emits one more reservation event for `tenant`, whose
 * automation sends to `receiver`, and resolves with its event id once its webhook has arrived. A send
 * that should not exist and was set off before (a second job, a resend) has been under way longer than
 * the sentinel, which still had to pass the outbox and the events worker: a test asserts on what
 * arrived besides it instead of sleeping for a fixed time.
 */
export async function sendSentinel(tenant: { organisationId: string; venueId: string }, receiver: WebhookReceiver): Promise<string> {
  const { eventId } = await emitReservationEvent(tenant);
  await eventually(async () => receiver.received.some((r) => eventIdOf(r) === eventId), 20_000, `the sentinel webhook of event ${eventId}`);
  return eventId;
}
