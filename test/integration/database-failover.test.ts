import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { bullPrefixOf } from '../../src/redis/key-layout.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDeploymentKeys } from '../support/deployment-keys.js';
import { eventually } from '../support/eventually.js';
import { startOwnApp, seedDemo, sendReservationsTo, type OwnApp } from '../support/own-app.js';
import { ownPostgresAvailable, startOwnPostgres, startOwnStandby, type OwnPostgres } from '../support/own-postgres.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { timedCall, type TimedOutcome } from '../support/timed-call.js';
import { localDate } from '../support/venue-fixtures.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

// A primary and its streaming standby of this file alone; every role in one process (`npm start`)
// given both hosts in DATABASE_URL. The primary is killed (immediate stop) under writes and the
// standby promoted, as Patroni would: the process must follow on its own.
let primary: OwnPostgres;
let standby: OwnPostgres;
let app: OwnApp;
let receiver: WebhookReceiver;
let origin: string;
let base: string;
const queuePrefix = `${process.env.QUEUE_PREFIX}failover`;

beforeAll(async () => {
  if (!ownPostgresAvailable) return;
  primary = await startOwnPostgres();
  standby = await startOwnStandby(primary);
  receiver = await startWebhookReceiver();
  const hosts = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write`;
  app = await startOwnApp({ DATABASE_URL: hosts, DATABASE_DIRECT_URL: hosts, QUEUE_PREFIX: queuePrefix });
  ({ origin, base } = app);
}, 90_000);

afterAll(async () => {
  app?.kill();
  await receiver?.close();
  await primary?.destroy();
  await standby?.destroy();
  await removeDeploymentKeys(queuePrefix);
});

type Outcome = TimedOutcome;
const call = (key: string, method: string, path: string, body?: unknown, idempotencyKey?: string) =>
  timedCall(base, key, method, path, body, idempotencyKey);

const readiness = async () => {
  const res = await fetch(`${origin}/readyz`);
  return { status: res.status, database: ((await res.json()) as { database?: string }).database };
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const expected = (o: Outcome) => typeof o.status === 'number' && (o.status < 300 || o.status === 409 || o.status === 503);

describe.skipIf(!ownPostgresAvailable)('the primary dies and its standby is promoted (DATABASE_URL with both hosts)', () => {
  let key: string;
  let venueId: string;
  let stream: SseStream;
  const outcomes: Outcome[] = [];
  const booked: string[] = [];

  it('writes answer 201 or 503, never 500; /readyz is 503 while no host accepts writes; every 201 is on the new primary', async () => {
    const demo = await seedDemo(`postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres`);
    key = demo.keys.live;
    venueId = demo.venueId;
    await sendReservationsTo(base, key, venueId, receiver.url);
    stream = await openSse(`${base}/events/stream?venueId=${venueId}`, key);

    let stop = false;
    let n = 0;
    const times = ['12:00', '12:30', '13:00', '19:00', '19:30', '20:00', '20:30', '21:00'];
    const writer = async () => {
      while (!stop) {
        const i = n++;
        const body = { venueId, serviceDate: localDate(2 + (i % 40)), time: times[i % times.length], partySize: 2 };
        const res = await call(key, 'POST', '/reservations', body, `failover-${i}`);
        outcomes.push(res);
        if (res.status === 201) booked.push(res.body.reservation.id);
        if (res.status === 503) await sleep(100);
      }
    };
    const ready: Array<{ at: number; answeredAt: number; status: number; database?: string }> = [];
    const poll = async () => {
      while (!stop) {
        const asked = Date.now();
        const answer = await readiness().catch(() => ({ status: 0 }));
        ready.push({ at: asked, answeredAt: Date.now(), ...answer });
        await sleep(200);
      }
    };
    const clients = [...Array.from({ length: 8 }, writer), poll()];

    await eventually(
      async () => outcomes.filter((o) => o.status === 201).length >= 8 && ready.some((r) => r.status === 200),
      20_000,
      'bookings and /readyz answered before the kill',
    );
    const killedAt = Date.now();
    await primary.stop('immediate');
    // No host accepts writes: the old primary is gone, the standby is still read-only. The promotion
    // waits until /readyz has said so (more than a second after the kill) and a booking was answered 503.
    await eventually(
      async () =>
        ready.some((r) => r.at > killedAt + 1000 && r.status === 503) && outcomes.some((o) => o.at > killedAt && o.status === 503),
      30_000,
      '/readyz and a booking to answer 503 while no host accepts writes',
    );
    const promotedAt = Date.now();
    await standby.promote();
    await eventually(
      async () => outcomes.some((o) => o.at > promotedAt && o.status === 201),
      20_000,
      'a booking to succeed on the new primary',
    );
    await eventually(
      async () =>
        ready.some((r) => r.at > promotedAt && r.status === 200) &&
        outcomes.filter((o) => o.at > promotedAt && o.status === 201).length >= 8,
      20_000,
      '/readyz and the writers back on the new primary',
    );
    stop = true;
    await Promise.all(clients);

    expect(app.child.exitCode, app.output()).toBeNull();
    expect(outcomes.filter((o) => !expected(o)).map((o) => o.status)).toEqual([]);
    const unavailable = outcomes.filter((o) => o.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    expect(unavailable.every((o) => o.retryAfter === '5')).toBe(true);
    // <=: the answer the wait above saw may have come in the very millisecond the promotion started.
    const between = ready.filter((r) => r.at > killedAt + 1000 && r.answeredAt <= promotedAt);
    expect(between.length).toBeGreaterThan(0);
    expect(between.every((r) => r.status === 503)).toBe(true);
    expect(ready.at(-1)?.status).toBe(200);

    const promoted = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      const [{ stored }] = await promoted<
        { stored: number }[]
      >`select count(*)::int as stored from reservations where id = any(${booked}::uuid[])`;
      expect(stored).toBe(booked.length);
    } finally {
      await promoted.end();
    }
    const first503 = Math.min(...unavailable.map((o) => o.answeredAt));
    const next201 = Math.min(...outcomes.filter((o) => o.status === 201 && o.answeredAt > first503).map((o) => o.answeredAt));
    console.log(
      `failover: ${booked.length} × 201 (all on the new primary), ${unavailable.length} × 503; first 503 to next 201 ${((next201 - first503) / 1000).toFixed(1)} s, of which ${((next201 - promotedAt) / 1000).toFixed(1)} s after the promotion`,
    );
  }, 90_000);

  it('the live stream, the outbox and the webhooks resume on the new primary: every booking delivered once', async () => {
    const after = await call(
      key,
      'POST',
      '/reservations',
      { venueId, serviceDate: localDate(45), time: '19:00', partySize: 2 },
      'after-failover',
    );
    expect(after.status).toBe(201);
    booked.push(after.body.reservation.id);
    await stream.waitFor(
      (frames) => frames.some((f) => f.event === 'reservation_created' && f.data?.includes(after.body.reservation.id)),
      20_000,
    );

    const promoted = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      const reservations = (await promoted<{ id: string }[]>`select id from reservations`).map((r) => r.id);
      const deliveredKeys = () => {
        const keys = new Map<string, Set<string>>();
        for (const request of receiver.received) {
          const envelope = JSON.parse(request.body.toString()) as { id: string; type: string; data: { reservation: { id: string } } };
          if (envelope.type !== 'reservation_created') continue;
          const id = envelope.data.reservation.id;
          keys.set(id, (keys.get(id) ?? new Set()).add(envelope.id));
        }
        return keys;
      };
      const delivered = await eventually(
        async () => {
          const keys = deliveredKeys();
          return reservations.every((id) => keys.has(id)) && keys;
        },
        30_000,
        'a webhook for every reservation on the new primary',
      ).catch(() => deliveredKeys());
      expect(reservations.filter((id) => !delivered.has(id))).toEqual([]);
      // At most one delivery key per reservation: nothing sent twice as two deliveries.
      expect([...delivered.values()].filter((keys) => keys.size > 1)).toEqual([]);
    } finally {
      await promoted.end();
    }
    stream.close();

    // The timers' worker runs its tasks on the new primary: the outbox and delivery sweeps and the
    // late/no-show scan, added now rather than awaited at their 30 s beat.
    const connection = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    const timers = new Queue('timers', { connection, prefix: bullPrefixOf(queuePrefix, 'timers') });
    try {
      const jobs = await Promise.all((['outbox-sweep', 'late-no-show'] as const).map((task) => timers.add(task, { task })));
      const states = await eventually(
        async () => {
          const now = await Promise.all(jobs.map((job) => timers.getJobState(job.id!)));
          return now.every((state) => state === 'completed' || state === 'failed') && now;
        },
        20_000,
        'the timer tasks to run',
      );
      expect(states).toEqual(['completed', 'completed']);
    } finally {
      await timers.close();
      await connection.quit();
    }
    expect(app.child.exitCode, app.output()).toBeNull();
  }, 60_000);

  it('a primary fenced read-only under open connections: writes answer 503 (idempotency store included), the connections are ended, writes resume once it accepts them', async () => {
    const admin = postgres(standby.url, { max: 1, onnotice: () => {} });
    try {
      const ours = async () =>
        (await admin<{ pid: number }[]>`select pid from pg_stat_activity where application_name like 'floorline %'`).map((r) => r.pid);
      const before = await ours();
      expect(before.length).toBeGreaterThan(0);
      await admin`alter system set default_transaction_read_only = on`;
      await admin`select pg_reload_conf()`;
      // The first statement after the reload reports the change (readiness's own, here).
      await eventually(async () => (await readiness()).status === 503, 10_000, '/readyz to see the server read-only');
      // No host accepts writes: `read_only` through one host, `unreachable` through several (each is refused).
      expect(await readiness()).toMatchObject({ status: 503, database: expect.stringMatching(/^(read_only|unreachable)$/) });
      // Every connection the process had open there when it turned read-only is ended.
      await eventually(async () => (await ours()).every((pid) => !before.includes(pid)), 10_000, 'the old connections to be ended');
      const body = { venueId, serviceDate: localDate(46), time: '19:00', partySize: 2 };
      // With an Idempotency-Key the first statement to fail is its store's insert (outside the booking's transaction).
      const fenced = await call(key, 'POST', '/reservations', body, 'fenced-1');
      expect([fenced.status, fenced.retryAfter, fenced.body?.error?.code]).toEqual([503, '5', 'unavailable']);
      const plain = await call(key, 'POST', '/reservations', body);
      expect([plain.status, plain.retryAfter]).toEqual([503, '5']);

      await admin`alter system reset default_transaction_read_only`;
      await admin`select pg_reload_conf()`;
      let attempt = 0;
      const again = await eventually(
        async () => {
          const res = await call(key, 'POST', '/reservations', body, `unfenced-${attempt++}`);
          return res.status === 201 && res;
        },
        15_000,
        'the booking to succeed once writes are accepted',
      );
      expect(again.status).toBe(201);
      expect((await readiness()).status).toBe(200);
    } finally {
      await admin`alter system reset default_transaction_read_only`.catch(() => {});
      await admin`select pg_reload_conf()`.catch(() => {});
      await admin.end();
    }
    expect(app.child.exitCode, app.output()).toBeNull();
  }, 60_000);
});
