import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDeploymentKeys } from '../support/deployment-keys.js';
import { eventually } from '../support/eventually.js';
import { startOwnApp, seedDemo, sendReservationsTo, type OwnApp } from '../support/own-app.js';
import { ownPostgresAvailable, startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { timedCall } from '../support/timed-call.js';
import { localDate } from '../support/venue-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// Each place where the application runs a statement meets a server that ends its connection under
// it (57P01, as a primary shutting down does): the table the statement needs is locked by the test,
// the app's backend waiting on it is terminated. The API answers 503 with Retry-After, a worker
// postpones its job without consuming an attempt, and all goes on once the server is back.
let pg: OwnPostgres;
let app: OwnApp;
let receiver: WebhookReceiver;
let admin: postgres.Sql;
let demo: Awaited<ReturnType<typeof seedDemo>>;
const queuePrefix = `${process.env.QUEUE_PREFIX}unavailable`;

beforeAll(async () => {
  if (!ownPostgresAvailable) return;
  pg = await startOwnPostgres();
  receiver = await startWebhookReceiver();
  app = await startOwnApp({ DATABASE_URL: pg.url, QUEUE_PREFIX: queuePrefix });
  demo = await seedDemo(pg.url);
  await sendReservationsTo(app.base, demo.keys.live, demo.venueId, receiver.url);
  admin = postgres(pg.url, { max: 1, onnotice: () => {} });
}, 90_000);

afterAll(async () => {
  app?.kill();
  await admin?.end();
  await receiver?.close();
  await pg?.destroy();
  await removeDeploymentKeys(queuePrefix);
});

const call = (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) =>
  timedCall(app.base, key, method, path, body, idempotencyKey);
const answerOf = (o: Awaited<ReturnType<typeof call>>) => [o.status, o.retryAfter, o.body?.error?.code];
const unavailable = [503, '5', 'unavailable'];
let bookings = 0;
const booking = () => ({ venueId: demo.venueId, serviceDate: localDate(2 + (bookings++ % 40)), time: '19:00', partySize: 2 });
/** The app's backends waiting for `table` (not any lock: a booking may wait a moment to extend a table, and must not be ended then). */
const waitingFor = (table: string) =>
  `from pg_locks l join pg_stat_activity a using (pid)
   where l.locktype = 'relation' and l.relation = '${table}'::regclass and not l.granted and a.application_name like 'floorline %'`;

/**
 * Runs `started` while `table` is locked by a transaction of the test's own: the first statement of
 * the app that needs the table waits, and its backend is then terminated (pg_terminate_backend), so
 * that statement fails with 57P01 admin_shutdown and its connection closes. The lock is released
 * once `started` has settled.
 */
async function meetShutdown<T>(table: string, started: () => Promise<T>): Promise<T> {
  return admin.begin(async (tx) => {
    await tx.unsafe(`lock table ${table} in access exclusive mode`);
    const pending = started();
    await eventually(
      async () => {
        // Inside a transaction pg_stat_activity keeps the snapshot of its first read: a backend the app
        // opened after it would never be seen.
        await tx.unsafe('select pg_stat_clear_snapshot()');
        return (await tx.unsafe<{ n: number }[]>(`select count(*)::int as n ${waitingFor(table)}`))[0].n > 0;
      },
      10_000,
      `a statement of the app waiting on ${table}`,
    );
    await tx.unsafe(`select pg_terminate_backend(pid) ${waitingFor(table)}`);
    return pending;
  }) as Promise<T>;
}

/** The reservation_created webhooks received for `reservationId`, by delivery key (the envelope's id). */
function deliveryKeysOf(reservationId: string): Set<string> {
  const keys = new Set<string>();
  for (const request of receiver.received) {
    const envelope = JSON.parse(request.body.toString()) as { id: string; type: string; data: { reservation: { id: string } } };
    if (envelope.type === 'reservation_created' && envelope.data.reservation.id === reservationId) keys.add(envelope.id);
  }
  return keys;
}

/** The app's log lines of a worker postponing a job, and of a job failing (an attempt consumed). */
const postponedLines = () => app.output().match(/job postponed without consuming an attempt/g)?.length ?? 0;
const failedJobLines = () => app.output().match(/"msg":"job failed"/g)?.length ?? 0;

describe.skipIf(!ownPostgresAvailable)('a statement whose connection the server ends (57P01), wherever it runs', () => {
  it('the key lookup (a key not in the cache): 503 with Retry-After, then 200', async () => {
    // The test organisation's key has not been used: authenticating it looks it up (the driver's error wrapped by drizzle).
    expect(answerOf(await meetShutdown('api_keys', () => call(demo.keys.test, 'GET', '/me')))).toEqual(unavailable);
    expect((await call(demo.keys.test, 'GET', '/me')).status).toBe(200);
  });

  it('the idempotency store (its claim, outside the booking’s transaction): 503, and the same key then books', async () => {
    expect((await call(demo.keys.live, 'GET', '/me')).status).toBe(200); // the key cached: the claim is the first statement
    const body = booking();
    expect(answerOf(await meetShutdown('idempotency_keys', () => call(demo.keys.live, 'POST', '/reservations', body, 'ended-1')))).toEqual(
      unavailable,
    );
    expect((await call(demo.keys.live, 'POST', '/reservations', body, 'ended-1')).status).toBe(201);
  });

  it('a read outside a transaction: 503, then 200', async () => {
    expect((await call(demo.keys.live, 'GET', '/me')).status).toBe(200);
    const list = `/reservations?venueId=${demo.venueId}&from=${localDate(2)}&to=${localDate(45)}&limit=5`;
    expect(answerOf(await meetShutdown('reservations', () => call(demo.keys.live, 'GET', list)))).toEqual(unavailable);
    expect((await call(demo.keys.live, 'GET', list)).status).toBe(200);
  });

  it('a statement inside a transaction (the driver’s error bare): 503, then 201', async () => {
    expect((await call(demo.keys.live, 'GET', '/me')).status).toBe(200);
    const body = booking();
    expect(answerOf(await meetShutdown('reservations', () => call(demo.keys.live, 'POST', '/reservations', body)))).toEqual(unavailable);
    expect((await call(demo.keys.live, 'POST', '/reservations', body)).status).toBe(201);
  });

  it.each([
    { worker: 'the event worker (its automation run)', table: 'automation_runs' },
    { worker: 'the delivery worker (its delivery’s state)', table: 'organisation_webhook_secrets' },
  ])(
    '$worker: the job is postponed without consuming an attempt, then its webhook is delivered once',
    async ({ table }) => {
      const postponed = postponedLines();
      const failed = failedJobLines();
      // The booking commits (it needs nothing of `table`); the worker's statement on the table is the one
      // ended. A booking can be ended with it (seen: the booking met the same 57P01, its statement on a
      // connection the termination closed) and answers 503, as it should: it is sent again.
      const res = await meetShutdown(table, () =>
        eventually(
          async () => {
            const sent = await call(demo.keys.live, 'POST', '/reservations', booking());
            return sent.status === 201 && sent;
          },
          15_000,
          'a booking answered 201',
        ),
      );
      const booked = res.body.reservation.id as string;
      await eventually(async () => postponedLines() > postponed, 10_000, 'the worker to postpone its job');
      const keys = await eventually(async () => deliveryKeysOf(booked).size > 0 && deliveryKeysOf(booked), 20_000, 'the webhook');
      expect(keys.size).toBe(1);
      expect(failedJobLines()).toBe(failed);
      expect(app.child.exitCode, app.output()).toBeNull();
    },
    40_000,
  );
});
