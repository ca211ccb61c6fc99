import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { bullPrefixOf } from '../../src/redis/key-layout.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnApp, seedDemo, sendReservationsTo, type OwnApp } from '../support/own-app.js';
import { localDate } from '../support/venue-fixtures.js';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { removeDeploymentKeys } from '../support/deployment-keys.js';
import { eventually } from '../support/eventually.js';
import { timedCall, type TimedOutcome } from '../support/timed-call.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Every role in one process (as `npm start` runs them), against a PostgreSQL of this file alone.
let pg: OwnPostgres;
let app: OwnApp;
let receiver: WebhookReceiver;
let base: string;
const queuePrefix = `${process.env.QUEUE_PREFIX}pgdown`;

beforeAll(async () => {
  if (!ownPostgresAvailable) return;
  pg = await startOwnPostgres();
  receiver = await startWebhookReceiver();
  app = await startOwnApp({ DATABASE_URL: pg.url, QUEUE_PREFIX: queuePrefix });
  base = app.base;
}, 90_000);

afterAll(async () => {
  app?.kill();
  await receiver?.close();
  await pg?.destroy();
  await removeDeploymentKeys(queuePrefix);
});

type Outcome = TimedOutcome;
const call = (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) =>
  timedCall(base, key, method, path, body, idempotencyKey);

describe.skipIf(!ownPostgresAvailable)('PostgreSQL stopped under concurrent reads and writes', () => {
  it('no process exits, the API answers only 503 with Retry-After, jobs keep their attempts, and all resumes', async () => {
    const demo = await seedDemo(pg.url);
    const key = demo.keys.live;
    await sendReservationsTo(base, key, demo.venueId, receiver.url);

    const outcomes: Outcome[] = [];
    const booked: string[] = [];
    let stop = false;
    let n = 0;
    const writer = async () => {
      while (!stop) {
        const i = n++;
        const times = ['12:00', '12:30', '13:00', '19:00', '19:30', '20:00', '20:30', '21:00'];
        // Half of them with an Idempotency-Key: its store's statements, outside the booking's
        // transaction, meet the outage too (issue 48: they answered 500).
        const res = await call(
          key,
          'POST',
          '/reservations',
          { venueId: demo.venueId, serviceDate: localDate(2 + (i % 40)), time: times[i % times.length], partySize: 2 },
          i % 2 ? `outage-${i}` : undefined,
        );
        outcomes.push(res);
        if (res.status === 201) booked.push(res.body.reservation.id);
      }
    };
    const reader = async () => {
      while (!stop)
        outcomes.push(await call(key, 'GET', `/reservations?venueId=${demo.venueId}&from=${localDate(2)}&to=${localDate(10)}&limit=20`));
    };
    const clients = [...Array.from({ length: 8 }, writer), ...Array.from({ length: 8 }, reader)];

    // The load under way before the outage: bookings and reads answered.
    await eventually(
      async () => outcomes.some((o) => o.status === 201) && outcomes.some((o) => o.status === 200),
      20_000,
      'bookings and reads answered before the outage',
    );
    const before = outcomes.length;
    const outputBefore = app.output().length;
    await pg.stop('immediate');
    // The outage lasts until every part has met it: writes and reads answered 503, and a job that ran
    // into it postponed (its attempt kept), rather than for a fixed time.
    await eventually(
      async () => {
        const since = outcomes.slice(before);
        return (
          since.some((o) => o.status === 503 && o.method === 'POST') &&
          since.some((o) => o.status === 503 && o.method === 'GET') &&
          app.output().slice(outputBefore).includes('database unreachable: job postponed')
        );
      },
      60_000,
      'writes, reads and a job to meet the outage',
    );
    expect(app.child.exitCode, app.output()).toBeNull();
    const during = outcomes.slice(before);
    await pg.start();
    const restarted = outcomes.length;
    // Writes and reads succeed again by themselves.
    await eventually(
      async () => outcomes.slice(restarted).some((o) => o.status === 201) && outcomes.slice(restarted).some((o) => o.status === 200),
      20_000,
      'requests to succeed again',
    );
    stop = true;
    await Promise.all(clients);

    expect(app.child.exitCode, app.output()).toBeNull();
    const statuses = new Set(outcomes.map((o) => o.status));
    const unexpected = outcomes.filter(
      (o) => !(typeof o.status === 'number' && (o.status < 300 || (o.status >= 400 && o.status < 500) || o.status === 503)),
    );
    expect(unexpected, `statuses seen: ${[...statuses].join(', ')}`).toEqual([]);
    expect(during.filter((o) => o.status === 503).length).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o.status === 503).every((o) => o.retryAfter !== null)).toBe(true);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(10_000);

    // Every reservation the API accepted gets its webhook: no job was discarded or ran out of attempts because of the outage.
    const db = postgres(pg.url, { max: 1, onnotice: () => {} });
    try {
      const stats = async () => {
        const [row] = await db`
          select (select count(*)::int from reservations) as reservations,
                 (select count(*)::int from events where type = 'reservation_created') as events,
                 (select count(*)::int from events where type = 'reservation_created' and dispatched_at is null) as undispatched,
                 (select count(*)::int from webhook_deliveries where status = 'delivered') as delivered,
                 (select count(*)::int from webhook_deliveries where status = 'pending') as pending,
                 (select count(*)::int from webhook_deliveries where status = 'discarded') as discarded`;
        return row;
      };
      // An event is marked dispatched after its deliveries are enqueued (and a mark that met the outage
      // comes with the job's next run, 5 s later): its webhook may arrive first, so the wait is for both.
      const done = await eventually(
        async () => {
          const s = await stats();
          return s.delivered === s.events && s.events === s.reservations && s.undispatched === 0 && s;
        },
        30_000,
        'every booking to be delivered and its event marked dispatched',
      ).catch(async () => stats());
      expect(done).toMatchObject({ undispatched: 0, pending: 0, discarded: 0 });
      expect(done.reservations).toBeGreaterThanOrEqual(booked.length);
      expect(done.delivered).toBe(done.reservations);
    } finally {
      await db.end();
    }
    const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    try {
      for (const name of ['events', 'webhook-delivery']) {
        const queue = new Queue(name, { connection, prefix: bullPrefixOf(queuePrefix, name) });
        expect(await queue.getFailedCount(), `failed jobs in ${name}`).toBe(0);
        await queue.close();
      }
    } finally {
      await connection.quit();
    }
  }, 120_000);
});
