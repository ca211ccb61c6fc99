import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, pool } from '../../src/db/client.js';
import { automations, events, reservations, webhookDeliveries } from '../../src/db/schema/index.js';
import { eventJob } from '../../src/jobs/event-job.js';
import { addCatchUpSweepJob } from '../../src/jobs/timer-job.js';
import { promoteDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { closeQueues, getQueue } from '../../src/queues/queues.js';
import { closeRedis } from '../../src/redis.js';
import { endAll, endProcess, startRole, type RoleProcess } from '../chaos/own-processes.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { client, createTenant, type Client, type Tenant } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { waitForImport } from '../support/imports.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { useOwnDatabase } from '../support/own-database.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../support/webhook-receiver.js';
import { compiledEntry } from '../support/entry-process.js';

// Its own database (worker-timers sweeps and marks every row of the database it is given) and queues.
const ownDatabase = await useOwnDatabase('tracing');
useOwnQueuePrefix('tracing');

/** The guest of every booking here: none of it may appear in any span. */
const guest = { firstName: 'Grace', lastName: 'Hopper', phone: '347 765 4321', email: 'grace.hopper@example.com' };
const notes = 'Allergic to walnuts, table by the window';
const guestData = ['Grace', 'Hopper', '765 4321', '7654321', 'grace.hopper@example.com', 'walnuts'];

let otlp: OtlpReceiver;
let partner: WebhookReceiver;
const roles: RoleProcess[] = [];
let tenant: Tenant;
let api: Client;
/** Every role exports over OTLP/HTTP to this file's receiver, each in one of the two encodings. */
const tracingEnv = (protocol: 'http/json' | 'http/protobuf') => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_BSP_SCHEDULE_DELAY: '100',
  METRICS_TOKEN: metricsToken,
});
const metricsToken = 'tracing-test-metrics-token';

/** A process's /metrics, in the Prometheus text format or, asked for, OpenMetrics. */
async function scrape(role: RoleProcess, openMetrics: boolean): Promise<string> {
  const res = await fetch(role.metricsUrl, {
    headers: { authorization: `Bearer ${metricsToken}`, ...(openMetrics ? { accept: 'application/openmetrics-text; version=1.0.0' } : {}) },
  });
  expect(res.status).toBe(200);
  return res.text();
}

/** The booking that the partner fails once: its first attempt answers 500. */
const flakyRef = 'flaky-partner';

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  let failedOnce = false;
  partner = await startWebhookReceiver((request) => {
    if (!failedOnce && request.body.toString('utf8').includes(flakyRef)) {
      failedOnce = true;
      return 500;
    }
    return 200;
  });
  tenant = await createTenant();
  await configureVenue(tenant.venueId);
  roles.push(
    ...(await Promise.all([
      startRole('web', tracingEnv('http/json')),
      startRole('events', tracingEnv('http/protobuf')),
      startRole('webhooks', tracingEnv('http/json')),
    ])),
  );
  api = client(roles[0].url!, tenant.key);
  expect((await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: partner.url })).status).toBe(201);
  const automation = await api.post('/automations', {
    venueId: tenant.venueId,
    name: 'Tell the partner',
    eventTypes: ['reservation_created', 'reservation_late'],
    action: { type: 'partner_notification' },
  });
  expect(automation.status).toBe(201);
}, 180_000);

afterAll(async () => {
  // SIGTERM: each process exports its last spans before it exits.
  await Promise.all(roles.map((r) => endProcess(r.child)));
  await endAll();
  await Promise.all([otlp?.close(), partner?.close()]);
  await closeQueues();
  await closeRedis();
  await pool().end();
  await ownDatabase.drop();
}, 120_000);

/** Starts a worker process of `role` for the tests that need it, unless one is running. */
async function startRoleOnce(role: 'timers' | 'imports'): Promise<void> {
  if (!roles.some((r) => r.role === role)) roles.push(await startRole(role, tracingEnv('http/protobuf')));
}

async function book(extra: Record<string, unknown> = {}) {
  const res = await api.post('/reservations', {
    venueId: tenant.venueId,
    serviceDate: localDate(1),
    time: '19:00',
    partySize: 2,
    guest,
    notes,
    ...extra,
  });
  expect(res.status).toBe(201);
  return res.body.reservation as { id: string };
}

/** The partner's request about a reservation (of an event type), the n-th one (0-based). */
function requestsAbout(reservationId: string, type: string): ReceivedWebhook[] {
  return partner.received.filter((r) => {
    const body = JSON.parse(r.body.toString('utf8')) as { type: string; data: { reservation?: { id: string } } };
    return body.type === type && body.data.reservation?.id === reservationId;
  });
}

/** `00-<trace id>-<span id>-<flags>` */
function parseTraceparent(value: string | string[] | undefined) {
  const match = /^00-([\da-f]{32})-([\da-f]{16})-0[01]$/.exec(String(value));
  expect(match, `traceparent ${value}`).not.toBeNull();
  return { traceId: match![1], spanId: match![2] };
}

/** A chain's spans as `<service>: <name>`. */
const namesOf = (chain: ReceivedSpan[]) => chain.map((s) => `${s.service}: ${s.name}`);
/** A booking's chain, from the partner's request up to the API request, across the three processes. */
const bookingChain = [
  'floorline-webhooks: POST webhook',
  'floorline-webhooks: process webhook-delivery',
  'floorline-events: process events',
  'floorline-web: outbox write',
  'floorline-web: transaction',
  'floorline-web: POST /api/v1/reservations',
];

const spansOf = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
const byId = (spans: ReceivedSpan[], id: string) => spans.find((s) => s.spanId === id);

/** Walks up from `span` to its root within `spans`: the chain of names, its own first. */
function ancestry(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const chain = [span];
  for (let parent = byId(spans, span.parentSpanId); parent; parent = byId(spans, parent.parentSpanId)) chain.push(parent);
  return chain;
}

/**
 * The chain from `span` up to the root of its trace, once every span of it has been received (each
 * process exports its spans as they end, in batches: a job's span after its POST's).
 */
async function chainOf(span: ReceivedSpan): Promise<ReceivedSpan[]> {
  return eventually(
    async () => {
      const chain = ancestry(spansOf(span.traceId), span);
      return chain.at(-1)!.parentSpanId === '' && chain;
    },
    20_000,
    `the root of the trace of ${span.name}`,
  );
}

async function deliveryOf(reservationId: string, type: string) {
  return eventually(
    async () => {
      const [row] = await db()
        .select({ id: webhookDeliveries.id, status: webhookDeliveries.status })
        .from(webhookDeliveries)
        .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
        .where(sql`${events.subjectId} = ${reservationId} and ${events.type} = ${type}`);
      return row;
    },
    30_000,
    `the ${type} delivery of ${reservationId}`,
  );
}

async function attemptsOf(deliveryId: string) {
  const res = await api.get(`/webhook-deliveries/${deliveryId}/attempts`);
  expect(res.status).toBe(200);
  return res.body.data as Array<{ attempt: number; responseStatus: number | null; traceId: string | null }>;
}

describe('tracing (docs/operations.md "Tracing")', () => {
  it('follows one booking from the API request through worker-events and worker-webhooks to the partner, in one trace', async () => {
    const reservation = await book();
    const [request] = await eventually(
      async () => requestsAbout(reservation.id, 'reservation_created').length > 0 && requestsAbout(reservation.id, 'reservation_created'),
      30_000,
      "the partner's webhook",
    );
    const partnerSaw = parseTraceparent(request.headers.traceparent);
    const delivery = await deliveryOf(reservation.id, 'reservation_created');

    // Every process's spans of the trace have reached the receiver once the client span has.
    const client = await eventually(async () => byId(spansOf(partnerSaw.traceId), partnerSaw.spanId), 20_000, 'the delivery client span');
    expect(client).toMatchObject({ service: 'floorline-webhooks', name: 'POST webhook', kind: 3 });
    expect(client.attributes).toMatchObject({
      'server.address': '127.0.0.1',
      'http.response.status_code': 200,
      'floorline.webhook.attempt': 1,
      'floorline.webhook.delivery_id': delivery.id,
    });

    // The chain from the partner's request up to the API request, across the three processes.
    const chain = await chainOf(client);
    const trace = spansOf(partnerSaw.traceId);
    expect(namesOf(chain)).toEqual(bookingChain);
    const server = chain.at(-1)!;
    expect(server).toMatchObject({ kind: 2, parentSpanId: '' });
    expect(server.attributes).toMatchObject({ 'http.route': '/api/v1/reservations', 'http.response.status_code': 201 });
    expect(chain[2].attributes).toMatchObject({
      'messaging.destination.name': 'events',
      'messaging.operation.name': 'process',
      'floorline.job.name': 'reservation_created',
      'floorline.job.attempt': 1,
    });
    expect(chain[1].attributes).toMatchObject({ 'messaging.destination.name': 'webhook-delivery', 'floorline.job.attempt': 1 });
    // The JSON and the protobuf exports both arrived and were decoded alike.
    expect(new Set(trace.map((s) => `${s.service} ${s.contentType}`))).toEqual(
      new Set(['floorline-web application/json', 'floorline-events application/x-protobuf', 'floorline-webhooks application/json']),
    );

    // SQL statement spans of the request: the reservation's insert among them, its text without values.
    const statements = trace.filter((s) => s.service === 'floorline-web' && s.attributes['db.system.name'] === 'postgresql');
    const insert = statements.find(
      (s) => s.attributes['db.operation.name'] === 'insert' && s.attributes['db.collection.name'] === 'reservations',
    );
    expect(insert, statements.map((s) => s.name).join(', ')).toBeDefined();
    expect(String(insert!.attributes['db.query.text'])).toMatch(/\$1/);
    expect(statements.every((s) => ancestry(trace, s).at(-1) === server)).toBe(true);
    expect(trace.some((s) => s.service === 'floorline-events' && s.attributes['db.system.name'] === 'postgresql')).toBe(true);

    // The attempt log names the trace.
    expect((await attemptsOf(delivery.id)).map((a) => a.traceId)).toEqual([partnerSaw.traceId]);

    // The request's log line carries its trace and server span.
    const lines = readFileSync(roles[0].logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"msg":"request"') && l.includes('"path":"/api/v1/reservations"'));
    expect(lines.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(
      expect.objectContaining({ status: 201, trace_id: server.traceId, span_id: server.spanId }),
    );

    // Exemplars: the request's and the delivery's histograms name the trace, in OpenMetrics only.
    const exemplar = `# {trace_id="${partnerSaw.traceId}"}`;
    const webMetrics = await scrape(roles[0], true);
    expect(
      webMetrics
        .split('\n')
        .filter((l) => l.startsWith('http_request_duration_seconds_bucket') && l.includes('route="/api/v1/reservations"'))
        .join('\n'),
    ).toContain(exemplar);
    expect(await scrape(roles[0], false)).not.toContain('trace_id');
    const webhookMetrics = await scrape(roles[2], true);
    expect(
      webhookMetrics
        .split('\n')
        .filter((l) => l.startsWith('webhook_delivery_lag_seconds_bucket'))
        .join('\n'),
    ).toContain(exemplar);
  }, 90_000);

  it('a failed first attempt and its retry are two traces, the retry linked to the attempt before; so is a redelivery', async () => {
    const reservation = await book({ externalRef: flakyRef, time: '20:00' });
    const delivery = await deliveryOf(reservation.id, 'reservation_created');
    await eventually(async () => (await attemptsOf(delivery.id)).length === 1, 30_000, 'the failed first attempt');
    // The retry is due in a minute: brought forward as an operator would from Bull Board.
    await eventually(() => promoteDeliveryJob(delivery.id), 10_000, 'the retry job to be delayed');
    const [first, second] = await eventually(
      async () => requestsAbout(reservation.id, 'reservation_created').length === 2 && requestsAbout(reservation.id, 'reservation_created'),
      30_000,
      'the retry',
    );
    const failed = parseTraceparent(first.headers.traceparent);
    const retried = parseTraceparent(second.headers.traceparent);
    expect(retried.traceId).not.toBe(failed.traceId);

    const retrySpan = await eventually(async () => byId(spansOf(retried.traceId), retried.spanId), 20_000, 'the retry client span');
    expect(retrySpan.links).toEqual([{ traceId: failed.traceId, spanId: failed.spanId }]);
    expect(retrySpan.attributes['floorline.webhook.attempt']).toBe(2);
    // The retry's trace is its own: its root is the retry's job, not the booking's request.
    const root = (await chainOf(retrySpan)).at(-1)!;
    expect(root).toMatchObject({ service: 'floorline-webhooks', name: 'process webhook-delivery', parentSpanId: '' });
    expect(root.attributes['floorline.job.attempt']).toBe(2);
    // The failed attempt stayed in the booking's trace, marked failed.
    const failedSpan = await eventually(async () => byId(spansOf(failed.traceId), failed.spanId), 20_000, 'the failed client span');
    expect(failedSpan.status).toBe(2);
    expect((await chainOf(failedSpan)).at(-1)!.name).toBe('POST /api/v1/reservations');

    // A redelivery: a third attempt in a trace of its own, linked to the second.
    await eventually(async () => (await attemptsOf(delivery.id)).length === 2, 20_000, 'the retry recorded');
    expect((await api.post(`/webhook-deliveries/${delivery.id}/redeliver`)).status).toBe(202);
    const third = await eventually(async () => requestsAbout(reservation.id, 'reservation_created')[2], 30_000, 'the redelivery');
    const redelivered = parseTraceparent(third.headers.traceparent);
    const redeliverySpan = await eventually(
      async () => byId(spansOf(redelivered.traceId), redelivered.spanId),
      20_000,
      'the redelivery span',
    );
    expect(redeliverySpan.links).toEqual([{ traceId: retried.traceId, spanId: retried.spanId }]);
    expect((await chainOf(redeliverySpan)).at(-1)!.name).toBe('process webhook-delivery');
    await eventually(async () => (await attemptsOf(delivery.id)).length === 3, 20_000, 'the redelivery recorded');
    expect((await attemptsOf(delivery.id)).map((a) => a.traceId)).toEqual([failed.traceId, retried.traceId, redelivered.traceId]);
  }, 120_000);

  it("the webhook of a reservation marked late goes out in the timer job's trace, not the booking's", async () => {
    const reservation = await book({ time: '21:00' });
    const booked = await deliveryOf(reservation.id, 'reservation_created');
    const [created] = await eventually(
      async () => (await attemptsOf(booked.id)).length > 0 && attemptsOf(booked.id),
      30_000,
      'the booking webhook',
    );
    // Due 20 minutes ago: past the venue's 15-minute tolerance.
    await db()
      .update(reservations)
      .set({ startsAt: sql`now() - interval '20 minutes'` })
      .where(eq(reservations.id, reservation.id));
    await startRoleOnce('timers');
    const [late] = await eventually(
      async () => requestsAbout(reservation.id, 'reservation_late').length > 0 && requestsAbout(reservation.id, 'reservation_late'),
      60_000,
      'the reservation_late webhook',
    );
    const sent = parseTraceparent(late.headers.traceparent);
    expect(sent.traceId).not.toBe(created.traceId);
    const lateClient = await eventually(async () => byId(spansOf(sent.traceId), sent.spanId), 20_000, 'the late client span');
    const chain = await chainOf(lateClient);
    expect(namesOf(chain)).toEqual([
      'floorline-webhooks: POST webhook',
      'floorline-webhooks: process webhook-delivery',
      'floorline-events: process events',
      'floorline-timers: outbox write',
      'floorline-timers: transaction',
      'floorline-timers: process timers',
    ]);
    expect(chain.at(-1)).toMatchObject({ parentSpanId: '', kind: 5 });
    expect(chain.at(-1)!.attributes).toMatchObject({ 'floorline.job.name': 'late-no-show' });
  }, 150_000);

  it("an event whose job Redis lost is swept and processed and delivered in the booking's trace", async () => {
    // The booking's request comes with a trace of the caller's: its id is known here, not read back.
    const caller = { traceId: randomBytes(16).toString('hex'), spanId: randomBytes(8).toString('hex') };
    const eventsQueue = getQueue(eventJob.queueName);
    // An automation runs for the events committed after it was made: the event aged below is too.
    await db()
      .update(automations)
      .set({ createdAt: sql`${automations.createdAt} - interval '1 hour'` })
      .where(eq(automations.venueId, tenant.venueId));
    // worker-events takes no job while the queue is paused: the event's job is removed before it runs.
    await eventsQueue.pause();
    let eventId: string;
    let reservationId: string;
    try {
      const res = await api.post(
        '/reservations',
        { venueId: tenant.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2, guest, notes },
        { traceparent: `00-${caller.traceId}-${caller.spanId}-01` },
      );
      expect(res.status, res.text).toBe(201);
      reservationId = (res.body.reservation as { id: string }).id;
      const [row] = await db()
        .select({ id: events.id })
        .from(events)
        .where(sql`${events.subjectId} = ${reservationId} and ${events.type} = 'reservation_created'`);
      eventId = row.id;
      await eventually(async () => (await eventsQueue.getJob(eventId)) !== undefined, 10_000, 'the event job enqueued');
      // Redis lost it, and the event is past the sweeper's 30 s.
      await eventsQueue.remove(eventId);
      await db()
        .update(events)
        .set({ createdAt: sql`${events.createdAt} - interval '40 seconds'` })
        .where(eq(events.id, eventId));
    } finally {
      await eventsQueue.resume();
    }
    // worker-timers sweeps now rather than at its next beat.
    await startRoleOnce('timers');
    await addCatchUpSweepJob(0);
    const [sent] = await eventually(
      async () => requestsAbout(reservationId, 'reservation_created').length > 0 && requestsAbout(reservationId, 'reservation_created'),
      30_000,
      'the swept event delivered',
    );
    const partnerSaw = parseTraceparent(sent.headers.traceparent);
    expect(partnerSaw.traceId).toBe(caller.traceId);
    const client = await eventually(async () => byId(spansOf(caller.traceId), partnerSaw.spanId), 20_000, 'the delivery client span');
    // Up to the request's server span, whose parent is the caller's span (not exported here).
    const chain = await eventually(
      async () => {
        const found = ancestry(spansOf(caller.traceId), client);
        return found.at(-1)!.parentSpanId === caller.spanId && found;
      },
      20_000,
      'the chain up to the request',
    );
    expect(namesOf(chain)).toEqual(bookingChain);
    expect(chain[2].attributes['messaging.message.id']).toBe(eventId);
  }, 90_000);

  it('each import chunk is a trace of its own, linked to the import job', async () => {
    await startRoleOnce('imports');
    // 150 guests: two chunks of at most 100 rows.
    const rows = Array.from({ length: 150 }, (_, i) => ({
      venueId: tenant.venueId,
      phone: `+39 347 765 ${String(4000 + i).padStart(4, '0')}`,
      firstName: guest.firstName,
      lastName: guest.lastName,
      notes,
    }));
    const res = await api.post('/imports/guests', { rows });
    expect(res.status).toBe(202);
    const importId = (res.body.import as { id: string }).id;
    expect(await waitForImport(api, importId)).toMatchObject({ status: 'completed', createdRows: 150 });

    const job = await eventually(
      async () => otlp.spans.find((s) => s.name === 'process imports' && s.attributes['messaging.message.id'] === importId),
      20_000,
      'the import job span',
    );
    expect(job).toMatchObject({ service: 'floorline-imports', parentSpanId: '', kind: 5 });
    const chunks = await eventually(
      async () => {
        const found = otlp.spans.filter((s) => s.name === 'import chunk' && s.attributes['floorline.import.id'] === importId);
        return found.length === 2 && found;
      },
      20_000,
      'the spans of the two chunks',
    );
    expect(chunks.map((c) => c.attributes['floorline.import.rows']).sort()).toEqual([100, 50]);
    for (const chunk of chunks) {
      // A root of a trace of its own, pointing back at the job.
      expect(chunk).toMatchObject({ service: 'floorline-imports', parentSpanId: '' });
      expect(chunk.traceId).not.toBe(job.traceId);
      expect(chunk.links).toEqual([{ traceId: job.traceId, spanId: job.spanId }]);
      // The chunk's transaction and its statements (the guests' inserts among them) are in its trace.
      const trace = await eventually(
        async () => {
          const spans = spansOf(chunk.traceId);
          return spans.some((s) => s.attributes['db.collection.name'] === 'guests') && spans;
        },
        20_000,
        "the chunk's statements",
      );
      expect(trace.every((s) => ancestry(trace, s).at(-1) === chunk)).toBe(true);
      expect(trace.filter((s) => s.name === 'transaction').map((s) => s.parentSpanId)).toEqual([chunk.spanId]);
    }
    expect(chunks[0].traceId).not.toBe(chunks[1].traceId);
  }, 90_000);

  it("no span attribute holds the guest's name, phone, email or notes", async () => {
    // Runs after the bookings above: every span they made has been received.
    expect(otlp.spans.length).toBeGreaterThan(50);
    const leaks = otlp.spans.flatMap((s) =>
      Object.entries(s.attributes)
        .filter(([, value]) => guestData.some((d) => String(value).includes(d)))
        .map(([key, value]) => `${s.service} ${s.name} ${key}=${value}`),
    );
    expect(leaks).toEqual([]);
    expect(otlp.spans.some((s) => s.name.includes('Grace') || s.name.includes('Hopper'))).toBe(false);
  });
});

describe('tracing off', () => {
  /**
   * The CommonJS modules a worker process loaded (every OpenTelemetry package is one), from its start
   * to its stop, recorded as it exits by a module imported before its entry point.
   */
  async function modulesLoadedBy(env: Record<string, string>): Promise<string[]> {
    const dir = mkdtempSync(path.join(tmpdir(), 'floorline-tracing-'));
    const file = path.join(dir, 'modules.txt');
    try {
      const recorder = `import { createRequire } from 'node:module'; import { writeFileSync } from 'node:fs';
        const cache = createRequire(${JSON.stringify(path.resolve('package.json'))}).cache;
        process.on('exit', () => writeFileSync(${JSON.stringify(file)}, Object.keys(cache).join('\\n')));`;
      const { OTEL_EXPORTER_OTLP_ENDPOINT: _e, OTEL_TRACES_EXPORTER: _t, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: _te, ...rest } = process.env;
      const metricsPort = await freePort();
      const child = spawn(
        process.execPath,
        ['--import', `data:text/javascript,${encodeURIComponent(recorder)}`, compiledEntry('src/main.ts'), '--role', 'imports'],
        { env: { ...rest, LOG_LEVEL: 'info', METRICS_PORT: String(metricsPort), ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(`code ${code}, signal ${signal}`)));
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
      // Stopped, by its pid, once it serves: /healthz answers 200 only once the process is marked
      // serving, in the same synchronous step that installs its stop on SIGTERM (before that, the
      // signal would meet the default action).
      const serving = () =>
        fetch(`http://127.0.0.1:${metricsPort}/healthz`).then(
          (res) => res.ok,
          () => false,
        );
      await eventually(async () => child.exitCode !== null || (await serving()), 120_000, 'the worker to serve').catch((err: Error) => {
        throw new Error(`${err.message}: ${output}`);
      });
      child.kill('SIGTERM');
      const exit = await exited;
      expect(existsSync(file), `${exit}: ${output}`).toBe(true);
      return readFileSync(file, 'utf8').split('\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it('loads no OpenTelemetry SDK unless an OTLP endpoint or a traces exporter is set', async () => {
    const [off, on] = await Promise.all([modulesLoadedBy({}), modulesLoadedBy({ OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })]);
    // @opentelemetry/api is a dependency of prom-client, which loads it (and finds no tracer in it):
    // the interface alone, with nothing behind it. Anything else of OpenTelemetry is the SDK.
    const otel = (modules: string[]) =>
      modules.filter(
        (m) => m.includes(`${path.sep}@opentelemetry${path.sep}`) && !m.includes(`${path.sep}@opentelemetry${path.sep}api${path.sep}`),
      );
    expect(off.length).toBeGreaterThan(10);
    expect(otel(off)).toEqual([]);
    // The same recorder sees the SDK when tracing is on.
    expect(otel(on).some((m) => m.includes(`${path.sep}sdk-node${path.sep}`))).toBe(true);
  }, 150_000);
});
