import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { eventPositions, events } from '../../src/db/schema/index.js';
import { createVenue } from '../../src/services/venues/venue-service.js';
import { client, createKey, createTenant, startTestServer, type TestServer } from '../support/harness.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

// Two web processes: this one (in-process) and a child serving the same app on its own port.
let inProcess: TestServer;
let child: ServeAppProcess;
const open: SseStream[] = [];

beforeAll(async () => {
  inProcess = await startTestServer();
  child = await spawnServeApp();
});
afterAll(async () => {
  for (const s of open) s.close();
  child.kill();
  await inProcess.eventStreams.closeAll();
  await inProcess.close();
});

async function stream(base: string, key: string, query = '', headers: Record<string, string> = {}): Promise<SseStream> {
  const s = await openSse(`${base}/api/v1/events/stream${query}`, key, headers);
  open.push(s);
  return s;
}

/** The organisation's published events in commit order (position). */
async function committed(organisationId: string) {
  return db()
    .select({ id: events.id, type: events.type, position: eventPositions.position })
    .from(eventPositions)
    .innerJoin(events, eq(events.id, eventPositions.eventId))
    .where(eq(eventPositions.organisationId, organisationId))
    .orderBy(asc(eventPositions.position));
}

const day = localDate(3);
const timeOf = (i: number) => `${18 + Math.floor((i % 16) / 4)}:${['00', '15', '30', '45'][i % 4]}`;

describe('GET /events/stream across two web processes (docs/webhooks.md "Live event stream")', () => {
  it('delivers the events committed through the other process, in commit order, within a second', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId, { tables: Array.from({ length: 30 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })) });
    const live = await stream(child.url, t.key);
    expect(live.status).toBe(200);
    const api = client(inProcess.url, t.key);

    // One at a time: each event reaches the client on the other process within a second of its commit.
    const latencies: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(i), partySize: 2 });
      expect(res.status).toBe(201);
      const committedBy = Date.now();
      const frames = await live.waitForEvents(i + 1, 3000);
      latencies.push(frames[i].receivedAt - committedBy);
      expect(JSON.parse(frames[i].data!)).toMatchObject({
        type: 'reservation_created',
        venueId: t.venueId,
        data: { reservation: { id: res.body.reservation.id } },
      });
    }
    expect(Math.max(...latencies)).toBeLessThan(1000);

    // Then 20 at once through both processes: all arrive, in commit order, each once.
    const both = [api, client(child.url, t.key)];
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        both[i % 2].post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(i + 5), partySize: 2 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(20).fill(201));
    const frames = await live.waitForEvents(25, 5000);
    const order = await committed(t.organisationId);
    expect(frames.map((f) => f.id)).toEqual(order.map((e) => e.id));
    expect(frames.map((f) => f.event)).toEqual(order.map((e) => e.type));
    const item = JSON.parse(frames[7].data!);
    const listed = (await api.get(`/events?limit=200`)).body.data.find((e: any) => e.id === frames[7].id);
    expect(item).toEqual(listed);
  });

  it('resumes after a disconnect with Last-Event-ID (or ?after) with nothing missed or repeated', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId, { tables: Array.from({ length: 30 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })) });
    const api = client(inProcess.url, t.key);
    const first = await stream(inProcess.url, t.key);
    for (let i = 0; i < 3; i++) await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(i), partySize: 2 });
    const seen = await first.waitForEvents(3);
    first.close();

    // Committed while no client is connected, through the other process.
    const other = client(child.url, t.key);
    for (let i = 3; i < 8; i++) await other.post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(i), partySize: 2 });
    const resumed = await stream(child.url, t.key, '', { 'last-event-id': seen[2].id! });
    await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(8), partySize: 2 });
    const rest = await resumed.waitForEvents(6);
    const order = (await committed(t.organisationId)).map((e) => e.id);
    expect([...seen, ...rest].map((f) => f.id)).toEqual(order);
    // Nothing repeated after them either: one more commit is the next frame (the stream is in commit order).
    await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: timeOf(9), partySize: 2 });
    await resumed.waitForEvents(7);
    const all = (await committed(t.organisationId)).map((e) => e.id);
    expect(resumed.events().map((f) => f.id)).toEqual(all.slice(3));

    const after = await stream(inProcess.url, t.key, `?after=${order[5]}`);
    expect((await after.waitForEvents(4)).map((f) => f.id)).toEqual(all.slice(6));
  });

  it('shows each key its own organisation and visible venues only', async () => {
    const t = await createTenant();
    const second = await createVenue(t.organisationId, { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' });
    await configureVenue(t.venueId);
    await configureVenue(second.id);
    const testTenant = await createTenant({ test: true });
    await configureVenue(testTenant.venueId);
    const limitedKey = await createKey(t.organisationId, { venueIds: [second.id] });

    const all = await stream(inProcess.url, t.key);
    const onlyFirst = await stream(child.url, t.key, `?venueId=${t.venueId}`);
    const both = await stream(child.url, t.key, `?venueId=${t.venueId}&venueId=${second.id}`);
    const limited = await stream(inProcess.url, limitedKey);
    const testOnly = await stream(child.url, testTenant.key);

    const api = client(inProcess.url, t.key);
    await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: '19:00', partySize: 2 });
    await api.post('/reservations', { venueId: second.id, serviceDate: day, time: '19:00', partySize: 2 });
    await client(inProcess.url, testTenant.key).post('/reservations', {
      venueId: testTenant.venueId,
      serviceDate: day,
      time: '19:00',
      partySize: 2,
    });

    const venuesOf = (frames: { data?: string }[]) => frames.map((f) => JSON.parse(f.data!).venueId);
    expect(venuesOf(await all.waitForEvents(2))).toEqual([t.venueId, second.id]);
    expect(venuesOf(await both.waitForEvents(2))).toEqual([t.venueId, second.id]);
    expect(venuesOf(await limited.waitForEvents(1))).toEqual([second.id]);
    expect(venuesOf(await testOnly.waitForEvents(1))).toEqual([testTenant.venueId]);
    // What a stream leaves out would reach it before a later event it does show (each organisation's
    // stream is in commit order): one more commit for each is the marker that it got past them.
    await api.post('/reservations', { venueId: second.id, serviceDate: day, time: '20:00', partySize: 2 });
    await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: '20:00', partySize: 2 });
    await client(inProcess.url, testTenant.key).post('/reservations', {
      venueId: testTenant.venueId,
      serviceDate: day,
      time: '20:00',
      partySize: 2,
    });
    expect(venuesOf(await onlyFirst.waitForEvents(2))).toEqual([t.venueId, t.venueId]);
    expect(venuesOf(await limited.waitForEvents(2))).toEqual([second.id, second.id]);
    expect(venuesOf(await testOnly.waitForEvents(2))).toEqual([testTenant.venueId, testTenant.venueId]);

    // Refusals are ordinary error answers, before any stream starts.
    const stranger = await createTenant();
    const refuse = async (key: string, query: string, headers: Record<string, string> = {}) => {
      const res = await fetch(`${inProcess.url}/api/v1/events/stream${query}`, { headers: { authorization: `Bearer ${key}`, ...headers } });
      return { status: res.status, body: (await res.json()) as any };
    };
    expect((await refuse(t.key, `?venueId=${stranger.venueId}`)).status).toBe(404);
    expect((await refuse(limitedKey, `?venueId=${t.venueId}`)).status).toBe(404);
    expect((await refuse(await createKey(t.organisationId, { scopes: ['reservations:read'] }), '')).status).toBe(403);
    const badHeader = await refuse(t.key, '', { 'last-event-id': 'nope' });
    expect(badHeader.status).toBe(400);
    expect(badHeader.body.error.details.fields).toEqual(['Last-Event-ID']);
    const foreign = (await committed(testTenant.organisationId))[0].id;
    expect((await refuse(t.key, `?after=${foreign}`)).body.error.details.fields).toEqual(['after']);
  });

  it('sends a keep-alive comment every 15 s on an idle stream', async () => {
    const t = await createTenant();
    const idle = await stream(child.url, t.key);
    await idle.waitFor((frames) => frames.some((f) => f.comment === 'keep-alive'), 17_000);
  }, 20_000);

  it('ends every open stream on closeAll (the web role stop)', async () => {
    const t = await createTenant();
    const s = await stream(inProcess.url, t.key);
    await s.waitFor((frames) => frames.length >= 1);
    await inProcess.eventStreams.closeAll();
    await s.ended;
    expect(inProcess.eventStreams.size).toBe(0);
  });
});
