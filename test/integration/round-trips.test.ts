import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, databaseOptionsOf, useDatabase } from '../../src/db/client.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { closeQueues, getQueue, getQueueConnection } from '../../src/queues/queues.js';
import { namespaceOf } from '../../src/redis/key-layout.js';
import { startWebhooksRole } from '../../src/roles/webhooks.js';
import { processEvents } from '../../src/services/event-processing/process-event.js';
import { settleEventNumbering } from '../../src/services/outbox/event-sequencer.js';
import { batchDeliveredRecords, type AttemptRecord } from '../../src/services/webhooks/delivery-state.js';
import { settleEnqueuedEvents } from '../../src/services/outbox/outbox.js';
import { configureDemoVenue } from '../../src/services/venue-config/demo-venue.js';
import { eventually } from '../support/eventually.js';
import { commandsSentDuring, watchRedisCommands } from '../support/redis-monitor.js';
import { useFileSettings, useOwnQueuePrefix } from '../support/file-settings.js';
import { createOwnDatabase } from '../support/own-database.js';
import { client, createTenant, testConfig, useTestServer, type Client } from '../support/harness.js';
import { localDate } from '../support/venue-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * What the two hot paths cost in round trips, counted rather than timed: the statements a booking
 * sends (its transaction, and the numbering of its event for the live stream), the statements a
 * webhook delivery sends and the Redis commands it sends. Each figure is in its test's title: a change
 * that adds one fails here and names it, and one that removes one updates the figure (docs/benchmarks.md
 * "Where a booking's and a delivery's CPU goes").
 */
// A database of its own: the events of its bookings are processed only when a test says so, and
// another file's outbox sweeper must not send them meanwhile.
useOwnQueuePrefix('rt');
const own = await createOwnDatabase('rt');
const config = useFileSettings({ DATABASE_URL: own.url });
const sent: string[] = [];
/** When each numbering run sent its try-lock (one per organisation with commits pending), never cleared. */
const numberingRunsAt: number[] = [];
const database = createDatabase({
  ...databaseOptionsOf(config),
  onStatement: (text) => {
    const head = text.trim().split(/\s+/).slice(0, 8).join(' ');
    sent.push(head);
    if (head.startsWith("select pg_try_advisory_xact_lock(hashtext('event-sequencer'),")) numberingRunsAt.push(performance.now());
  },
});
useDatabase(database);
const server = useTestServer();
// The checks' own reads go through a connection of their own, never counted.
const checks = postgres(config.DATABASE_URL, { max: 1, onnotice: () => {} });

let tenant: Awaited<ReturnType<typeof createTenant>>;
let api: Client;
let receiver: WebhookReceiver;
let stopWebhooks: (() => Promise<void>) | undefined;
let slots = 0;

/** A booking of the demo venue's dinner at the next quarter hour (19:00–21:45, a day after another), with `extra` fields. */
async function book(extra: Record<string, unknown> = {}): Promise<string> {
  const slot = slots++;
  const time = `${19 + Math.floor((slot % 12) / 4)}:${String((slot % 4) * 15).padStart(2, '0')}`;
  const serviceDate = localDate(3 + Math.floor(slot / 12));
  const res = await api.post('/reservations', { venueId: tenant.venueId, serviceDate, time, partySize: 2, ...extra });
  expect(res.status, res.text).toBe(201);
  return res.body.reservation.id as string;
}

/** The statements sent from `work`'s start until the event numbering it started has ended. */
async function statementsOf(work: () => Promise<unknown>): Promise<string[]> {
  // The key's lookup is cached for 4 s: renewed now if it lapsed, so that it is not counted.
  expect((await api.get('/me')).status).toBe(200);
  await settleEventNumbering();
  sent.length = 0;
  await work();
  await settleEventNumbering();
  return [...sent];
}

beforeAll(async () => {
  tenant = await createTenant();
  await configureDemoVenue(tenant.organisationId, tenant.venueId);
  api = client(server.url, tenant.key);
  receiver = await startWebhookReceiver();
  expect((await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: receiver.url })).status).toBe(201);
  const automation = await api.post('/automations', {
    venueId: tenant.venueId,
    name: 'Round trips',
    eventTypes: ['reservation_created'],
    action: { type: 'partner_notification' },
  });
  expect(automation.status).toBe(201);
  // Warm: the key's cache, the venue's configuration, its demand curve, each connection's prepared statements.
  for (let i = 0; i < 3; i++) await book({ guest: { firstName: 'Warm', lastName: 'Up', phone: `+39 333 000 00${i}0` } });
});

afterAll(async () => {
  await stopWebhooks?.();
  await receiver?.close();
  await closeQueues();
  await checks.end();
  await database.sql.end();
  await own.drop();
});

describe('round trips of a booking', () => {
  it('a booking sends 13 statements: 8 in its transaction (begin, its backend, the venue lock, the venue day, its row, its table, its event sent with the commit), 5 numbering its event', async () => {
    const statements = await statementsOf(() => book());
    expect(statements).toHaveLength(13);
  });

  it('bookings one after another share numbering runs: a run starts 50 ms after the one before at the earliest, with what committed meanwhile', async () => {
    await settleEventNumbering();
    const from = numberingRunsAt.length;
    const bookings = 6;
    for (let i = 0; i < bookings; i++) await book();
    await settleEventNumbering();
    // This file's bookings are one organisation's: one try-lock per run.
    const runs = numberingRunsAt.slice(from);
    expect(runs.length).toBeGreaterThan(0);
    // 50 ms between the runs' starts; the try-lock follows its run's BEGIN, whose round trip varies on
    // a busy machine, and timers may fire a few milliseconds early: half of that is the bound. Bookings
    // one after another with a run each (the code before) start them one booking apart (10 ms here).
    for (let i = 1; i < runs.length; i++) expect(runs[i] - runs[i - 1]).toBeGreaterThan(25);
    const [{ unnumbered }] = await checks<Array<{ unnumbered: number }>>`
      select count(*)::int as unnumbered from unsequenced_events where organisation_id = ${tenant.organisationId}`;
    expect(unnumbered).toBe(0);
  });

  it('a booking with a new guest sends 2 statements more than one without: the guest found or created', async () => {
    const without = await statementsOf(() => book());
    const withGuest = await statementsOf(() => book({ guest: { firstName: 'Ada', lastName: 'Lovelace', phone: '+39 333 123 4567' } }));
    expect(withGuest.length - without.length, withGuest.join('\n')).toBe(2);
  });

  it("a booking's event is enqueued with 2 Redis commands (its fair turn, paced, in one script; its job)", async () => {
    // The API runs in this process: its queue connection is this file's. The booking's rate count is
    // sent on a timer, 50 ms after the request, and left out.
    const ofThisFile = namespaceOf(config.QUEUE_PREFIX);
    // The earlier bookings' events may still wait for their batch (50 ms after the one before): sent now, not counted.
    await settleEnqueuedEvents();
    const sentForBooking = await commandsSentDuring(
      config.REDIS_URL ?? 'redis://127.0.0.1:6379',
      getQueueConnection(),
      async () => {
        await book();
        await settleEnqueuedEvents();
      },
      // A MULTI and its EXEC name no key.
      ({ name, line }) => name === 'multi' || name === 'exec' || (line.includes(ofThisFile) && !line.includes(`${ofThisFile}:rl:`)),
    );
    const commands = sentForBooking.map((c) => c.name);
    expect(commands, commands.join(', ')).toEqual(['evalsha', 'evalsha']);
  });
});

describe('round trips of an event processed alone', () => {
  /** The statements and the Redis commands (of this file's keys) worker-events' step sends for one event, processed alone. */
  async function processedAlone(eventId: string): Promise<{ statements: string[]; commands: string[] }> {
    await settleEnqueuedEvents();
    await settleEventNumbering();
    const ofThisFile = namespaceOf(config.QUEUE_PREFIX);
    sent.length = 0;
    const commands = await commandsSentDuring(
      config.REDIS_URL ?? 'redis://127.0.0.1:6379',
      getQueueConnection(),
      () => processEvents([eventId], config),
      ({ name, line }) => name === 'multi' || name === 'exec' || (line.includes(ofThisFile) && !line.includes(`${ofThisFile}:rl:`)),
    );
    expect((await checks`select 1 from events where id = ${eventId} and dispatched_at is not null`).length).toBe(1);
    return { statements: [...sent], commands: commands.map((c) => c.name) };
  }
  const eventOf = async (reservationId: string, type: string) =>
    (await checks<Array<{ id: string }>>`select id::text from events where subject_id = ${reservationId} and type = ${type}`)[0].id;

  it("an event its automation acts on is processed with 7 statements (the events read, with whether their venues' automations and queues have anything to do; begin, the automations locked with their venues' endpoints, the run, the delivery, commit; the mark) and 6 Redis commands (the destination's line looked at: a MULTI of two counts; the fair turn; the job)", async () => {
    const queue = getQueue(webhookDeliveryJob.queueName);
    // The delivery's job waits in the paused queue: only the step before it is counted.
    await queue.pause();
    try {
      // The first on this connection loads the scripts (EVAL, not EVALSHA): not counted.
      await processedAlone(await eventOf(await book(), 'reservation_created'));
      const eventId = await eventOf(await book(), 'reservation_created');
      const { statements, commands } = await processedAlone(eventId);
      expect(await checks`select status from webhook_deliveries where event_id = ${eventId}`).toEqual([{ status: 'pending' }]);
      expect(statements, statements.join('\n')).toHaveLength(7);
      expect(commands, commands.join(', ')).toEqual(['multi', 'zcard', 'zcard', 'exec', 'evalsha', 'evalsha']);
    } finally {
      await queue.resume();
    }
  });

  it("an event no automation acts on, at a venue nobody waits at, is processed with 2 statements (the events read, the mark) and no Redis command: a cancellation, whose freed table has nobody to go to, while another venue's automation is on cancellations and a party waits there", async () => {
    // What the events' read tells is about the event's own venue, not the platform's others.
    const other = await createTenant();
    const otherApi = client(server.url, other.key);
    const elsewhere = {
      venueId: other.venueId,
      name: 'Elsewhere',
      eventTypes: ['reservation_cancelled'],
      action: { type: 'partner_notification' },
    };
    expect((await otherApi.post('/automations', elsewhere)).status).toBe(201);
    const waiting = await otherApi.post('/waitlist', {
      venueId: other.venueId,
      serviceDate: localDate(1),
      partySize: 2,
      name: 'Ada Lovelace',
    });
    expect(waiting.status, waiting.text).toBe(201);
    const reservationId = await book();
    expect((await api.delete(`/reservations/${reservationId}`)).status).toBe(200);
    const eventId = await eventOf(reservationId, 'reservation_cancelled');
    const { statements, commands } = await processedAlone(eventId);
    expect(statements, statements.join('\n')).toHaveLength(2);
    expect(commands).toEqual([]);
    expect(await checks`select 1 from webhook_deliveries where event_id = ${eventId}`).toEqual([]);
  });
});

describe('round trips of a webhook delivery', () => {
  /** Deliveries measured one at a time; the median is taken, so that what BullMQ's worker does now and then (its stalled-jobs check) does not count. */
  const deliveries = 7;
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

  it('a delivery sends 3 statements (its context, its claim, its outcome) and 6 Redis commands (its job taken, then two more looked for by the idle worker; its slot taken, then freed with the waiters to wake; its job finished: no log line for a job removed on completion)', async () => {
    const queue = getQueue(webhookDeliveryJob.queueName);
    stopWebhooks = await startWebhooksRole(testConfig());
    const ownAddress = /addr=(\S+)/.exec(String(await getQueueConnection().client('INFO')))?.[1];
    // The commands this file's worker sends (keys of its prefix, whose braces Redis Cluster's hash tags
    // move), not those a script runs inside the server, nor the test's own, nor the worker's blocking
    // wait for the next job (what it does when idle, not per delivery), nor the booking's rate count,
    // which the API sends 50 ms after the request on a timer and so may fall inside the window.
    const ofThisFile = namespaceOf(config.QUEUE_PREFIX);
    const commands: string[] = [];
    const watching = await watchRedisCommands(config.REDIS_URL ?? 'redis://127.0.0.1:6379', ({ source, name, line }) => {
      if (source === 'lua' || source === ownAddress || name === 'bzpopmin' || line.includes(`${ofThisFile}:rl:`)) return;
      if (line.includes(ofThisFile)) commands.push(name);
    });
    const counted: Array<{ statements: string[]; commands: string[] }> = [];
    try {
      for (let i = 0; i < deliveries; i++) {
        const reservationId = await book();
        const [{ id: eventId }] = await checks<Array<{ id: string }>>`select id::text from events where subject_id = ${reservationId}`;
        await queue.pause();
        await processEvents([eventId], config);
        const arrived = receiver.received.length;
        sent.length = 0;
        commands.length = 0;
        await queue.resume();
        await eventually(async () => receiver.received.length > arrived || undefined, 20_000, 'the delivery');
        await eventually(
          async () =>
            Object.values(await queue.getJobCounts('active', 'wait', 'prioritized', 'delayed')).every((n) => n === 0) ? true : undefined,
          20_000,
          'its job completed',
        );
        counted.push({ statements: [...sent], commands: [...commands] });
      }
    } finally {
      watching.stop();
    }
    const fewest = {
      statements: median(counted.map((c) => c.statements.length)),
      redisCommands: median(counted.map((c) => c.commands.length)),
    };
    expect(
      fewest,
      counted.map((c) => `${c.statements.length} statements, ${c.commands.length} commands: ${c.commands.join(', ')}`).join('\n'),
    ).toEqual({ statements: 3, redisCommands: 6 });
  });
});

describe('round trips of delivered records', () => {
  it('deliveries concluded together are recorded in 1 statement (their rows, their attempt log, their destination’s health), and a record that cannot be written fails alone', async () => {
    const queue = getQueue(webhookDeliveryJob.queueName);
    // Pending deliveries whose jobs wait in the paused queue: this test concludes them itself.
    await queue.pause();
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const reservationId = await book();
      const [{ id }] = await checks<Array<{ id: string }>>`select id::text from events where subject_id = ${reservationId}`;
      eventIds.push(id);
    }
    await processEvents(eventIds, config);
    const pending = await checks<Array<{ id: string; endpointId: string; url: string }>>`
      select d.id::text, d.endpoint_id::text as "endpointId", w.url from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
      where d.event_id = any(${eventIds}::uuid[])`;
    expect(pending).toHaveLength(3);
    const recordOf = (deliveryId: string, endpointId: string, url: string, attempt = 1): AttemptRecord => ({
      deliveryId,
      outcome: { status: 200, error: null, endpointId, url },
      reachedEndpointId: endpointId,
      log: {
        attempt,
        startedAt: new Date(),
        durationMs: 3,
        responseStatus: 200,
        error: null,
        responseBodyExcerpt: 'ok',
        traceparent: null,
      },
    });
    const record = batchDeliveredRecords(50);
    sent.length = 0;
    const outcomes = await Promise.allSettled([
      ...pending.map((d) => record(recordOf(d.id, d.endpointId, d.url))),
      // Its delivery is gone (the attempt log's foreign key refuses it): the batch is written again one by one.
      record(recordOf(randomUUID(), pending[0].endpointId, pending[0].url)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    // The batch, then each record alone: the statements of records (not the numbering of the bookings'
    // events, which may still run, nor the server's types, which a connection the pool opens reads first).
    const statements = () => sent.filter((text) => /^with (i|health) as/.test(text));
    expect(statements(), statements().join('\n')).toHaveLength(1 + 4);
    const stored = await checks<Array<{ status: string; attempts: number }>>`
      select d.status, (select count(*)::int from webhook_delivery_attempts a where a.delivery_id = d.id) as attempts
      from webhook_deliveries d where d.id = any(${pending.map((d) => d.id)}::uuid[])`;
    expect(stored).toEqual(pending.map(() => ({ status: 'delivered', attempts: 1 })));

    // Without a record that fails: one statement for all.
    await checks`update webhook_deliveries set status = 'pending' where id = any(${pending.map((d) => d.id)}::uuid[])`;
    sent.length = 0;
    await Promise.all(pending.map((d) => record(recordOf(d.id, d.endpointId, d.url, 2))));
    expect(statements()).toHaveLength(1);
    expect(
      (await checks`select 1 from webhook_deliveries where id = any(${pending.map((d) => d.id)}::uuid[]) and status = 'delivered'`).length,
    ).toBe(3);
    // Their jobs run, find nothing to send, and complete (the delivery test above started the worker,
    // unless this test runs alone).
    stopWebhooks ??= await startWebhooksRole(testConfig());
    await queue.resume();
    await eventually(
      async () =>
        Object.values(await queue.getJobCounts('active', 'wait', 'prioritized', 'delayed')).every((n) => n === 0) ? true : undefined,
      20_000,
      'their jobs completed',
    );
  });
});
