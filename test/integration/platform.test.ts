import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { venues } from '../../src/db/schema/index.js';
import { revokeApiKey } from '../../src/services/keys/key-service.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { eventually } from '../support/eventually.js';

const server = useTestServer();

function expectError(res: { status: number; body: any; headers: Headers }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  expect(res.body.error.details).toBeTypeOf('object');
  expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
}

describe('authentication (docs/api.md "Keys, limits")', () => {
  it('401 unauthenticated without an Authorization header, or with an empty one', async () => {
    expectError(await client(server.url).get('/venues'), 401, 'unauthenticated');
    expectError(await client(server.url).get('/venues', { authorization: '' }), 401, 'unauthenticated');
  });

  it('401 api_key_invalid for a malformed header, a malformed key and an unknown key', async () => {
    const c = client(server.url);
    expectError(await c.get('/venues', { authorization: 'Basic abc' }), 401, 'api_key_invalid');
    expectError(await c.get('/venues', { authorization: 'Bearer nope' }), 401, 'api_key_invalid');
    expectError(await c.get('/venues', { authorization: `Bearer gsk_${'a'.repeat(43)}` }), 401, 'api_key_invalid');
  });

  it('401 api_key_revoked once a key is revoked, although the app had just cached it (4 s)', async () => {
    const t = await createTenant();
    expect((await client(server.url, t.key).get('/me')).status).toBe(200);
    await revokeApiKey(t.keyId);
    // The app's key cache keeps a key 4 s; the bound allows the polls' own time on a loaded machine.
    const res = await eventually(
      async () => {
        const r = await client(server.url, t.key).get('/me');
        return r.status === 401 && r;
      },
      8000,
      'the revocation to reach the app',
    );
    expectError(res, 401, 'api_key_revoked');
  });

  it('403 insufficient_scope naming the scope', async () => {
    const t = await createTenant({ key: { scopes: ['reservations:read'] } });
    const res = await client(server.url, t.key).get(`/venues/${t.venueId}`);
    expectError(res, 403, 'insufficient_scope');
    expect(res.body.error.details.requiredScope).toBe('venues:read');
    expect(res.body.livemode).toBe(true);
  });

  it('403 forbidden for organisation-wide operations with a venue-limited key', async () => {
    const t = await createTenant();
    const limited = await createKey(t.organisationId, { venueIds: [t.venueId] });
    const res = await client(server.url, limited).post('/venues', { name: 'X', timezone: 'Europe/Rome', countryCode: 'IT' });
    expectError(res, 403, 'forbidden');
  });

  it('GET /me describes the key, with livemode', async () => {
    const t = await createTenant({ test: true, key: { kind: 'test', scopes: ['venues:read'], venueIds: undefined } });
    const res = await client(server.url, t.key).get('/me');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      key: {
        id: t.keyId,
        name: 'test key',
        kind: 'test',
        livemode: false,
        scopes: ['venues:read'],
        venueIds: null,
        organisationId: t.organisationId,
      },
      livemode: false,
    });
    expect(t.key.startsWith('gsk_test_')).toBe(true);
  });
});

describe('publishable keys', () => {
  it('are refused outside the widget paths and from origins they do not list', async () => {
    const t = await createTenant();
    const widget = await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    expect(widget.startsWith('gspk_')).toBe(true);
    const res = await client(server.url, widget).get(`/venues/${t.venueId}`, { origin: 'https://shop.example' });
    expectError(res, 403, 'forbidden');
    expect(res.body.error.details.reason).toBe('publishable_key');
    expect(res.headers.get('x-ratelimit-limit')).toBe('120');
  });

  it('secret keys get no CORS headers', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).get(`/venues/${t.venueId}`, { origin: 'https://shop.example' });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('venue isolation', () => {
  it('a key of another organisation, or limited to another venue, gets 404', async () => {
    const a = await createTenant();
    const b = await createTenant();
    expectError(await client(server.url, b.key).get(`/venues/${a.venueId}`), 404, 'not_found');
    const [other] = await db()
      .insert(venues)
      .values({ organisationId: a.organisationId, name: 'Second', timezone: 'UTC', countryCode: 'GB' })
      .returning();
    const limited = await createKey(a.organisationId, { venueIds: [other.id] });
    expectError(await client(server.url, limited).get(`/venues/${a.venueId}`), 404, 'not_found');
    expect((await client(server.url, limited).get(`/venues/${other.id}`)).status).toBe(200);
    const list = await client(server.url, limited).get('/venues');
    expect(list.body.data.map((v: { id: string }) => v.id)).toEqual([other.id]);
  });
});

describe('routing', () => {
  it('404 not_found JSON for unknown paths and malformed ids', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    expectError(await c.get('/nothing-here'), 404, 'not_found');
    expectError(await c.get('/venues/not-a-uuid'), 404, 'not_found');
    expectError(await client(server.url).get('/nothing-here'), 404, 'not_found');
  });

  it('405 with an empty body and Allow for other methods', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).request('PUT', `/venues/${t.venueId}`);
    expect(res.status).toBe(405);
    expect(res.text).toBe('');
    expect(res.headers.get('allow')).toBe('GET, PATCH, HEAD');
  });
});

describe('request bodies', () => {
  it('invalid JSON → 400 naming body, with livemode', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).request('PATCH', `/venues/${t.venueId}`, {
      rawBody: '{"name": ',
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.fields).toEqual(['body']);
    expect(res.body.livemode).toBe(true);
  });

  it('unknown fields → 400 naming them', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).patch(`/venues/${t.venueId}`, { name: 'ok', colour: 'red' });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.fields).toEqual(['colour']);
  });

  it('wrong values → 400 naming each field', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).post('/venues', { name: '', timezone: 'Mars/Olympus', countryCode: 'XX' });
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.fields.sort()).toEqual(['countryCode', 'name', 'timezone']);
  });

  it('over 1 MiB → 413 payload_too_large', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).patch(`/venues/${t.venueId}`, { name: 'x'.repeat(1024 * 1024 + 10) });
    expectError(res, 413, 'payload_too_large');
  });

  it('unknown query parameters and a bad limit → 400 naming them', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    expect((await c.get('/venues?limit=0')).body.error.details.fields).toEqual(['limit']);
    expect((await c.get('/venues?limit=201')).body.error.details.fields).toEqual(['limit']);
    expect((await c.get('/venues?bogus=1')).body.error.details.fields).toEqual(['bogus']);
  });
});

describe('request ids', () => {
  it('echoes a valid client id, replaces an invalid one, and puts it in error bodies', async () => {
    const c = client(server.url);
    const echoed = await c.get('/venues', { 'x-request-id': 'client-id_1:2.3' });
    expect(echoed.headers.get('x-request-id')).toBe('client-id_1:2.3');
    expect(echoed.body.error.requestId).toBe('client-id_1:2.3');
    const replaced = await c.get('/venues', { 'x-request-id': 'bad id with spaces' });
    expect(replaced.headers.get('x-request-id')).not.toBe('bad id with spaces');
    expect(replaced.body.error.requestId).toBe(replaced.headers.get('x-request-id'));
  });
});

describe('rate limits', () => {
  it('sends the three headers and 429 with Retry-After past the limit', async () => {
    const t = await createTenant({ key: { rateLimitPerMinute: 3 } });
    const c = client(server.url, t.key);
    const first = await c.get('/me');
    expect(first.headers.get('x-ratelimit-limit')).toBe('3');
    expect(first.headers.get('x-ratelimit-remaining')).toBe('2');
    const reset = Number(first.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    await c.get('/me');
    await c.get('/me');
    const limited = await c.get('/me');
    expectError(limited, 429, 'rate_limited');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('x-ratelimit-remaining')).toBe('0');
  });

  it('counts per key: another key of the same organisation is not limited', async () => {
    const t = await createTenant({ key: { rateLimitPerMinute: 1 } });
    await client(server.url, t.key).get('/me');
    expect((await client(server.url, t.key).get('/me')).status).toBe(429);
    const other = await createKey(t.organisationId);
    expect((await client(server.url, other).get('/me')).status).toBe(200);
  });
});

describe('idempotency (docs/api.md "Keys, limits" and "Idempotency")', () => {
  it('replays the stored response byte for byte with Idempotent-Replayed', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const body = { name: 'New venue', timezone: 'Europe/Paris', countryCode: 'FR' };
    const first = await c.post('/venues', body, { 'idempotency-key': 'create-1' });
    expect(first.status).toBe(201);
    const again = await c.post(
      '/venues',
      { countryCode: 'FR', timezone: 'Europe/Paris', name: 'New venue' },
      { 'idempotency-key': 'create-1' },
    );
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const list = await c.get('/venues?limit=200');
    expect(list.body.data.filter((v: { name: string }) => v.name === 'New venue')).toHaveLength(1);
  });

  it('422 idempotency_key_reused for another body or another operation', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await c.post('/venues', { name: 'A', timezone: 'UTC', countryCode: 'GB' }, { 'idempotency-key': 'k-2' });
    expectError(
      await c.post('/venues', { name: 'B', timezone: 'UTC', countryCode: 'GB' }, { 'idempotency-key': 'k-2' }),
      422,
      'idempotency_key_reused',
    );
    expectError(await c.patch(`/venues/${t.venueId}`, { name: 'A' }, { 'idempotency-key': 'k-2' }), 422, 'idempotency_key_reused');
  });

  it('keys are per API key: another key may use the same value', async () => {
    const t = await createTenant();
    const other = await createKey(t.organisationId);
    const body = { name: 'Same', timezone: 'UTC', countryCode: 'GB' };
    const a = await client(server.url, t.key).post('/venues', body, { 'idempotency-key': 'shared' });
    const b = await client(server.url, other).post('/venues', body, { 'idempotency-key': 'shared' });
    expect(a.status).toBe(201);
    expect(b.status).toBe(201);
    expect(b.body.venue.id).not.toBe(a.body.venue.id);
  });

  it('two concurrent requests with one key: one runs, the other gets 409 idempotency_in_progress or the replay', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const body = { name: 'Race', timezone: 'UTC', countryCode: 'GB' };
    const results = await Promise.all(Array.from({ length: 8 }, () => c.post('/venues', body, { 'idempotency-key': 'race-1' })));
    const created = results.filter((r) => r.status === 201 && r.headers.get('idempotent-replayed') !== 'true');
    expect(created).toHaveLength(1);
    for (const r of results) {
      if (r.status === 409) expect(r.body.error.code).toBe('idempotency_in_progress');
      else expect(r.text).toBe(created[0].text);
    }
    const list = await c.get('/venues?limit=200');
    expect(list.body.data.filter((v: { name: string }) => v.name === 'Race')).toHaveLength(1);
  });

  it('4xx answers are remembered, validation included', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const bad = await c.post('/venues', { name: 'x' }, { 'idempotency-key': 'bad-1' });
    expect(bad.status).toBe(400);
    const again = await c.post('/venues', { name: 'x' }, { 'idempotency-key': 'bad-1' });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.text).toBe(bad.text);
  });

  it('an Idempotency-Key that is too long → 400', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).post(
      '/venues',
      { name: 'x', timezone: 'UTC', countryCode: 'GB' },
      { 'idempotency-key': 'k'.repeat(256) },
    );
    expectError(res, 400, 'invalid_request');
    expect(res.body.error.details.fields).toEqual(['Idempotency-Key']);
  });
});

describe('pagination', () => {
  it('walks a list with no duplicates or gaps while rows are inserted', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (let i = 0; i < 11; i++) await c.post('/venues', { name: `P${i}`, timezone: 'UTC', countryCode: 'GB' });
    const seen: string[] = [];
    let cursor: string | null = null;
    let inserted = 0;
    do {
      const res: any = await c.get(`/venues?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status).toBe(200);
      seen.push(...res.body.data.map((v: { id: string }) => v.id));
      cursor = res.body.nextCursor;
      if (inserted < 4) {
        await c.post('/venues', { name: `Late${inserted++}`, timezone: 'UTC', countryCode: 'GB' });
      }
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    const all = await c.get('/venues?limit=200');
    expect(seen).toEqual(all.body.data.map((v: { id: string }) => v.id));
    expect(seen).toHaveLength(12 + 4);
  });

  it('changedAfter orders by updatedAt and sees changes', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const since = new Date(Date.now() - 1000).toISOString();
    await c.patch(`/venues/${t.venueId}`, { name: 'renamed' });
    const res = await c.get(`/venues?changedAfter=${encodeURIComponent(since)}`);
    expect(res.body.data.map((v: { id: string }) => v.id)).toContain(t.venueId);
    const later = await c.get(`/venues?changedAfter=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`);
    expect(later.body.data).toEqual([]);
    expect(later.body.nextCursor).toBeNull();
  });

  it('a tampered cursor → 400 naming cursor', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await c.post('/venues', { name: 'one more', timezone: 'UTC', countryCode: 'GB' });
    const page = await c.get('/venues?limit=1');
    const cursor: string = page.body.nextCursor;
    const tampered = `${cursor.slice(0, 5)}${cursor[5] === 'A' ? 'B' : 'A'}${cursor.slice(6)}`;
    for (const bad of [tampered, 'garbage', '']) {
      const res = await c.get(`/venues?cursor=${encodeURIComponent(bad)}`);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toEqual(['cursor']);
    }
  });
});

describe('versions', () => {
  it('updatedAt strictly increases on every write', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const stamps: string[] = [];
    for (let i = 0; i < 5; i++) stamps.push((await c.patch(`/venues/${t.venueId}`, { name: `v${i}` })).body.venue.updatedAt);
    for (let i = 1; i < stamps.length; i++) expect(stamps[i] > stamps[i - 1]).toBe(true);
    expect(stamps[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });
});

describe('meta', () => {
  it('/healthz, /readyz and GET /status', async () => {
    const t = await createTenant();
    expect((await client(server.url).get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await client(server.url).get('/readyz')).body).toMatchObject({ status: 'ok', database: 'ok', redis: 'ok' });
    const status = await client(server.url, t.key).get('/status');
    expect(status.body).toMatchObject({ status: 'ok', database: 'ok', redis: 'ok', livemode: true });
    expect(typeof status.body.version).toBe('string');
  });

  it('/openapi.json is generated from the route schemas and /docs is served locally', async () => {
    const spec = await client(server.url).get('/openapi.json');
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toMatch(/^3\./);
    const patch = spec.body.paths['/venues/{id}'].patch;
    expect(Object.keys(patch.requestBody.content['application/json'].schema.properties)).toContain('timezone');
    const docs = await client(server.url).get('/docs');
    expect(docs.status).toBe(200);
    expect(docs.text).toContain('/api/v1/docs/start.js');
    expect(docs.text).not.toMatch(/https?:\/\//);
    const start = await fetch(`${server.url}/api/v1/docs/start.js`);
    expect(await start.text()).toContain('/api/v1/openapi.json');
    const asset = await fetch(`${server.url}/api/v1/docs/assets/swagger-ui-bundle.js`);
    expect(asset.status).toBe(200);
  });

  it('Bull Board needs basic auth', async () => {
    const denied = await fetch(`${server.url}/admin/queues`);
    expect(denied.status).toBe(401);
    const ok = await fetch(`${server.url}/admin/queues`, {
      headers: { authorization: `Basic ${Buffer.from('admin:test-admin-password').toString('base64')}` },
    });
    expect(ok.status).toBe(200);
    const queues = await fetch(`${server.url}/admin/queues/api/queues`, {
      headers: { authorization: `Basic ${Buffer.from('admin:test-admin-password').toString('base64')}` },
    });
    const names = ((await queues.json()) as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
    expect(names).toEqual(['events', 'imports', 'timers', 'webhook-delivery']);
  });
});

describe('public documentation routes', () => {
  it('answer whatever key is sent, even a publishable or an unknown one', async () => {
    const t = await createTenant();
    const widget = await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    for (const key of [widget, `gsk_${'a'.repeat(43)}`, undefined]) {
      const res = await client(server.url, key).get('/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body.openapi).toMatch(/^3\./);
    }
  });
});
