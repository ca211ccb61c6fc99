import { afterAll, describe, expect, it, vi } from 'vitest';
import { eq } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { apiKeys } from '../../src/db/schema/index.js';
import { createApiKey, revokeApiKey } from '../../src/services/keys/key-service.js';
import { client, createTenant, testConfig, useTestServer } from '../support/harness.js';
import { openSse, type SseStream } from '../support/sse-client.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

// A cap of two streams per key, a 3 s lifetime and a key check every 300 ms, so that each limit shows within seconds.
const server = useTestServer({ config: testConfig({ STREAMS_PER_KEY: 2, STREAM_MAX_LIFETIME_SECONDS: 3, STREAM_KEY_RECHECK_MS: 300 }) });
const open: SseStream[] = [];
afterAll(async () => {
  for (const s of open) s.close();
  await server.eventStreams.closeAll();
});

async function stream(key: string): Promise<SseStream> {
  const s = await openSse(`${server.url}/api/v1/events/stream`, key);
  open.push(s);
  return s;
}

/** Resolves with the stream's end, or rejects after `ms`. */
function endsWithin(s: SseStream, ms: number): Promise<void> {
  return Promise.race([
    s.ended,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`stream still open after ${ms} ms`)), ms)),
  ]);
}

const guest = { phone: '347 555 0101', firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', notes: 'window seat' };

describe('live streams end with their key (docs/security.md "Live streams")', () => {
  it('a revoked key’s open stream ends within seconds and carries no later event', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const watcher = await createApiKey({
      organisationId: t.organisationId,
      kind: 'live',
      name: 'watcher',
      scopes: ['events:read', 'guests:read'],
    });
    const live = await stream(watcher.key);
    expect(live.status).toBe(200);
    await revokeApiKey(watcher.id);
    await endsWithin(live, 5000);
    expect(live.frames.at(-1)?.comment).toBe('closed: key_revoked');
    const booked = await client(server.url, t.key).post('/reservations', {
      venueId: t.venueId,
      serviceDate: localDate(2),
      time: '19:00',
      partySize: 2,
      guest,
    });
    expect(booked.status).toBe(201);
    expect(live.events()).toEqual([]);
    // Requests see the revocation once the key's cache entry (4 s) expires.
    await vi.waitFor(async () => expect((await client(server.url, watcher.key).get('/events')).status).toBe(401), {
      timeout: 8000,
      interval: 250,
    });
  });

  it('a change of the key’s scopes ends its stream', async () => {
    const t = await createTenant();
    const watcher = await createApiKey({
      organisationId: t.organisationId,
      kind: 'live',
      name: 'watcher',
      scopes: ['events:read', 'guests:read'],
    });
    const live = await stream(watcher.key);
    await db()
      .update(apiKeys)
      .set({ scopes: ['events:read'] })
      .where(eq(apiKeys.id, watcher.id));
    await endsWithin(live, 5000);
    expect(live.frames.at(-1)?.comment).toBe('closed: key_changed');
  });

  it('a stream ends after its maximum lifetime', async () => {
    const t = await createTenant();
    const started = Date.now();
    const live = await stream(t.key);
    await endsWithin(live, 10_000);
    // Generous bounds: the lifetime is 3 s, checked every 300 ms.
    expect(Date.now() - started).toBeGreaterThanOrEqual(2500);
    expect(live.frames.at(-1)?.comment).toBe('closed: max_lifetime');
  });

  it('one key holds at most STREAMS_PER_KEY open streams: 429 beyond, a free place once one closes', async () => {
    const t = await createTenant();
    const [a, b] = [await stream(t.key), await stream(t.key)];
    expect([a.status, b.status]).toEqual([200, 200]);
    const refused = await fetch(`${server.url}/api/v1/events/stream`, { headers: { authorization: `Bearer ${t.key}` } });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    // Another key of the organisation has places of its own.
    const other = await createApiKey({ organisationId: t.organisationId, kind: 'live', name: 'other' });
    expect((await stream(other.key)).status).toBe(200);
    a.close();
    await vi.waitFor(async () => expect((await stream(t.key)).status).toBe(200), { timeout: 5000, interval: 100 });
  });
});

describe('events redacted by scope as webhook payloads are', () => {
  it('events:read without guests:read sees only guest ids, in GET /events and in the stream', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const eventsOnly = await createApiKey({ organisationId: t.organisationId, kind: 'live', name: 'events only', scopes: ['events:read'] });
    const live = await stream(eventsOnly.key);
    const booked = await client(server.url, t.key).post('/reservations', {
      venueId: t.venueId,
      serviceDate: localDate(2),
      time: '19:30',
      partySize: 2,
      guest,
    });
    expect(booked.status).toBe(201);
    const guestId = booked.body.reservation.guestId as string;

    await live.waitFor((frames) => frames.some((f) => f.event === 'reservation_created'));
    const streamed = live.events().find((f) => f.event === 'reservation_created')!;
    const listed = await client(server.url, eventsOnly.key).get('/events?type=reservation_created');
    const full = await client(server.url, t.key).get('/events?type=reservation_created');
    expect(full.body.data[0].data.reservation.guestDetails.email).toBe('ada@example.com');
    for (const event of [JSON.parse(streamed.data!), listed.body.data[0]]) {
      expect(event.data.reservation.guest).toEqual({ id: guestId });
      expect(event.data.reservation.guestDetails).toEqual({ id: guestId });
      expect(JSON.stringify(event)).not.toMatch(/ada@example\.com|Lovelace|0101/);
    }
    const guestEvents = await client(server.url, eventsOnly.key).get('/events?type=guest_profile_changed');
    expect(guestEvents.body.data[0].data.guest).toEqual({ id: guestId });
  });
});
