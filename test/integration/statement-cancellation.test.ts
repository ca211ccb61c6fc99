import http from 'node:http';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { eventually } from '../support/eventually.js';
import { countBlockedBy } from '../support/lock-waits.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

// The test's own session, apart from the server's pool: it holds the lock the request waits for.
const own = postgres(processConfig().DATABASE_URL, { max: 2, onnotice: () => {} });
afterAll(() => own.end());

/** The test session that holds the venue's row lock (whileVenueLocked). */
let holderPid = 0;

/** Statements of the server waiting for the venue lock the test holds (directly or behind another). */
const waitingStatements = () => countBlockedBy(holderPid, own);

/** Milliseconds until `check` holds (polled every 20 ms: how fast a cancel lands is what is measured). */
async function until(check: () => Promise<boolean>, ms: number): Promise<number> {
  const started = Date.now();
  await eventually(check, ms, `the waiting statements within ${ms} ms`, 20);
  return Date.now() - started;
}

/** Runs `during` while the test's own session holds the venue row FOR UPDATE: a booking's first statement (FOR SHARE on it) waits. */
async function whileVenueLocked(venueId: string, during: () => Promise<void>): Promise<void> {
  const reserved = await own.reserve();
  try {
    [{ pid: holderPid }] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
    await reserved`begin`;
    await reserved`select id from venues where id = ${venueId} for update`;
    await during();
  } finally {
    await reserved`rollback`;
    reserved.release();
  }
}

/** POST /reservations sent raw, so that the test can leave while it runs. */
function startBooking(url: string, key: string, body: unknown): http.ClientRequest {
  const target = new URL(`${url}/api/v1/reservations`);
  const req = http.request({
    host: target.hostname,
    port: target.port,
    path: target.pathname,
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  });
  req.on('error', () => {});
  req.end(JSON.stringify(body));
  return req;
}

describe('a request whose client has gone stops using the database', () => {
  const server = useTestServer();

  it('cancels the statement the request is waiting in, within a second of the client leaving', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    await whileVenueLocked(t.venueId, async () => {
      const booking = startBooking(server.url, t.key, { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 });
      await until(async () => (await waitingStatements()) === 1, 5000);
      booking.destroy();
      const gone = await until(async () => (await waitingStatements()) === 0, 1000);
      expect(gone).toBeLessThan(1000);
    });
    // The server is fine afterwards and nothing was booked by the request that left.
    const api = client(server.url, t.key);
    expect((await api.get(`/reservations?venueId=${t.venueId}`)).body.data).toEqual([]);
    expect((await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 })).status).toBe(
      201,
    );
  });
});

describe('many clients leaving at once', () => {
  const server = useTestServer();

  it("cancels the transaction of the request that left, not another's waiting on the same lock", async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const body = { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 };
    let stayed: Promise<number> | undefined;
    await whileVenueLocked(t.venueId, async () => {
      const leaving = startBooking(server.url, t.key, body);
      stayed = fetch(`${server.url}/api/v1/reservations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...body, time: '20:00' }),
      }).then((r) => r.status);
      await until(async () => (await waitingStatements()) === 2, 5000);
      leaving.destroy();
      await until(async () => (await waitingStatements()) === 1, 1000);
    });
    expect(await stayed).toBe(201);
    const listed = (await client(server.url, t.key).get(`/reservations?venueId=${t.venueId}`)).body.data;
    expect(listed.map((r: { time: string }) => r.time)).toEqual(['20:00']);
  });

  it('keeps answering, and books right, after 40 waiting bookings and 40 quick reads all lose their clients', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    await whileVenueLocked(t.venueId, async () => {
      // More bookings than the pool has connections: some wait on the venue's lock, the others in
      // the driver's queue; reads of other rows run beside them on whatever connection is free.
      const bookings = Array.from({ length: 40 }, (_, i) =>
        startBooking(server.url, t.key, { venueId: t.venueId, serviceDate: localDate(2), time: i % 2 ? '19:00' : '20:00', partySize: 2 }),
      );
      const reads = Array.from({ length: 40 }, () => {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), Math.random() * 600);
        return fetch(`${server.url}/api/v1/venues/${t.venueId}`, {
          headers: { authorization: `Bearer ${t.key}` },
          signal: controller.signal,
        }).then(
          (r) => r.text(),
          () => 'left',
        );
      });
      await until(async () => (await waitingStatements()) > 0, 5000);
      bookings.forEach((b) => b.destroy());
      await Promise.all(reads);
      // While the lock is still held: a cancel that never landed would leave its statement waiting
      // past any bound. 5 s, not 2: forty cancels on a 2-core machine running the suite took longer.
      await until(async () => (await waitingStatements()) === 0, 5000);
    });
    for (let i = 0; i < 20; i++) expect((await api.get(`/venues/${t.venueId}`)).status).toBe(200);
    // Every booking that lost its client was cancelled while it waited, the cancel repeated until its
    // transaction ended (a cancel between two statements alone would change nothing).
    expect((await api.get(`/reservations?venueId=${t.venueId}`)).body.data).toEqual([]);
    expect((await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 })).status).toBe(
      201,
    );
  });
});

describe('statement timeout', () => {
  let child: ServeAppProcess;
  beforeAll(async () => {
    child = await spawnServeApp({ DATABASE_STATEMENT_TIMEOUT_MS: '500' });
  });
  afterAll(() => child.kill());

  it('stops a statement that runs past DATABASE_STATEMENT_TIMEOUT_MS: 503 unavailable, and the database is free again', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    await whileVenueLocked(t.venueId, async () => {
      const started = Date.now();
      const res = await client(child.url, t.key).post('/reservations', {
        venueId: t.venueId,
        serviceDate: localDate(2),
        time: '19:00',
        partySize: 2,
      });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(res.status).toBe(503);
      expect(res.body.error).toMatchObject({ code: 'unavailable', details: { reason: 'statement_timeout' } });
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await waitingStatements()).toBe(0);
    });
  });
});
