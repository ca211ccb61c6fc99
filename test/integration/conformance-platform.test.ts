import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import type { AnyRoute } from '../../src/http/define-route.js';
import { apiRoutes } from '../../src/routes/index.js';
import { db } from '../../src/db/client.js';
import { automationRuns, events, venues, webhookDeliveries } from '../../src/db/schema/index.js';
import { client, createKey, createTenant, useTestServer, type ApiResponse, type Client, type Tenant } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { compiledEntry } from '../support/entry-process.js';

/**
 * Cross-cutting rules (docs/api.md "Requests", "Keys, limits", "Idempotency"), checked route by route over
 * the whole route table so that a route added later is held to them too.
 */

const server = useTestServer();

const label = (r: AnyRoute) => `${r.method.toUpperCase()} ${r.path}`;
const routeParams = (r: AnyRoute) => [...r.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
const fillPath = (r: AnyRoute, values: Record<string, string> = {}) =>
  r.path.replace(/:([A-Za-z]+)/g, (_m, name: string) => values[name] ?? randomUUID());
const queryKeys = (r: AnyRoute) => (r.query ? Object.keys(r.query.shape) : []);
const isList = (r: AnyRoute) => queryKeys(r).includes('limit');
const keyed = apiRoutes.filter((r) => !r.public);

/** The scope of every operation: docs/api.md and docs/api.md "Keys, limits" (venues:write, floor:write, waiting list, events, reports, automations, imports). */
const expectedScopes: Record<string, string | undefined> = {
  'GET /me': undefined,
  'GET /status': undefined,
  'GET /venues': 'venues:read',
  'POST /venues': 'venues:write',
  'GET /venues/:id': 'venues:read',
  'GET /venues/:id/turn-times/learned': 'venues:read',
  'PATCH /venues/:id': 'venues:write',
  'GET /events': 'events:read',
  'GET /events/stream': 'events:read',
  'GET /automations': 'webhooks:read',
  'POST /automations': 'webhooks:write',
  'GET /automations/:id': 'webhooks:read',
  'PATCH /automations/:id': 'webhooks:write',
  'DELETE /automations/:id': 'webhooks:write',
  'GET /webhook-endpoints': 'webhooks:read',
  'POST /webhook-endpoints': 'webhooks:write',
  'POST /webhook-endpoints/test': 'webhooks:write',
  'GET /webhook-endpoints/:id': 'webhooks:read',
  'PATCH /webhook-endpoints/:id': 'webhooks:write',
  'DELETE /webhook-endpoints/:id': 'webhooks:write',
  'POST /webhook-endpoints/:id/rotate-secret': 'webhooks:write',
  'POST /webhook-endpoints/:id/recover': 'webhooks:write',
  'POST /webhook-secret/rotate': 'webhooks:write',
  'GET /webhook-deliveries': 'webhooks:read',
  'GET /webhook-deliveries/:id': 'webhooks:read',
  'GET /webhook-deliveries/:id/attempts': 'webhooks:read',
  'POST /webhook-deliveries/:id/redeliver': 'webhooks:write',
  'GET /guests': 'guests:read',
  'POST /guests': 'guests:write',
  'GET /guests/lookup': 'guests:read',
  'GET /guests/:id': 'guests:read',
  'PATCH /guests/:id': 'guests:write',
  'DELETE /guests/:id': 'guests:write',
  'POST /guests/:id/restore': 'guests:write',
  'GET /service-tags': 'guests:read',
  'POST /service-tags': 'guests:write',
  'GET /service-tags/:id': 'guests:read',
  'PATCH /service-tags/:id': 'guests:write',
  'DELETE /service-tags/:id': 'guests:write',
  'POST /imports/guests': 'imports:write',
  'POST /imports/reservations': 'imports:write',
  'GET /imports': 'imports:write',
  'GET /imports/:id': 'imports:write',
  'GET /venues/:id/floor-plans': 'floor:read',
  'POST /venues/:id/floor-plans': 'floor:write',
  'GET /venues/:id/floor-plans/:planId': 'floor:read',
  'PUT /venues/:id/floor-plans/:planId': 'floor:write',
  'POST /venues/:id/floor-plans/:planId/activate': 'floor:write',
  'GET /venues/:id/tables': 'floor:read',
  'PATCH /venues/:id/tables/:tableId': 'floor:write',
  'GET /venues/:id/areas': 'floor:read',
  'GET /availability': 'reservations:read',
  'GET /availability/slots': 'reservations:read',
  'GET /availability/days': 'reservations:read',
  'POST /availability/holds': 'reservations:write',
  'GET /availability/holds/:id': 'reservations:write',
  'DELETE /availability/holds/:id': 'reservations:write',
  'POST /reservations': 'reservations:write',
  'GET /reservations': 'reservations:read',
  'GET /reservations/:id': 'reservations:read',
  'GET /reservations/:id/history': 'reservations:read',
  'PATCH /reservations/:id': 'reservations:write',
  'DELETE /reservations/:id': 'reservations:write',
  'POST /waitlist': 'reservations:write',
  'GET /waitlist': 'reservations:read',
  'GET /waitlist/quote': 'reservations:read',
  'GET /waitlist/:id': 'reservations:read',
  'PATCH /waitlist/:id': 'reservations:write',
  'POST /waitlist/:id/notify': 'reservations:write',
  'POST /waitlist/:id/convert': 'reservations:write',
  'DELETE /waitlist/:id': 'reservations:write',
  'GET /reports/summary': 'reservations:read',
  'GET /reports/occupancy': 'reservations:read',
  'GET /exports/reservations': 'reservations:read',
};
for (const kind of ['shifts', 'closures', 'turn-time-rules', 'pacing-rules']) {
  Object.assign(expectedScopes, {
    [`GET /venues/:id/${kind}`]: 'venues:read',
    [`POST /venues/:id/${kind}`]: 'venues:write',
    [`GET /venues/:id/${kind}/:ruleId`]: 'venues:read',
    [`PATCH /venues/:id/${kind}/:ruleId`]: 'venues:write',
    [`DELETE /venues/:id/${kind}/:ruleId`]: 'venues:write',
  });
}

/**
 * The four of docs/api.md "Keys, limits", the slot holds of docs/reservations.md "Slot holds" and the wait
 * quotes of docs/reservations.md "Turn times and wait quotes".
 */
const widgetOperations = [
  'GET /availability',
  'GET /availability/slots',
  'GET /availability/days',
  'GET /waitlist/quote',
  'POST /reservations',
  'POST /availability/holds',
  'GET /availability/holds/:id',
  'DELETE /availability/holds/:id',
];
const organisationWide = ['POST /venues', 'POST /webhook-secret/rotate'];
/** Query parameters that may repeat with valid values (docs/reservations.md "Turn times and wait quotes": up to 8 party sizes). */
const repeatable = ['GET /waitlist/quote partySize'];
/** GETs under a resource whose answer is a computed view, not the resource (no updatedAt, no ETag). */
const views = ['GET /venues/:id/turn-times/learned'];

function expectError(res: ApiResponse, status: number, code: string, what: string) {
  expect(res.status, `${what}: ${res.text}`).toBe(status);
  expect(res.body?.error?.code, what).toBe(code);
  expect(res.body.error.details, what).toBeTypeOf('object');
  expect(res.body.error.requestId, what).toBe(res.headers.get('x-request-id'));
}

/**
 * A concluded delivery written directly (no worker runs in this file), for the list under a delivery.
 * Its automation is inactive: another file's outbox sweep may process this file's events, and an
 * active automation would leave deliveries nobody attempts.
 */
async function insertDelivery(t: Tenant, c: Client): Promise<string> {
  const automation = (
    await c.post('/automations', {
      venueId: t.venueId,
      name: 'Lists',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification' },
      status: 'inactive',
    })
  ).body.automation;
  const [event] = await db()
    .insert(events)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      type: 'reservation_created',
      subjectType: 'none',
      data: {},
      livemode: true,
      published: false,
      dispatchedAt: new Date(),
    })
    .returning();
  const [run] = await db().insert(automationRuns).values({ automationId: automation.id, eventId: event.id }).returning();
  const [delivery] = await db()
    .insert(webhookDeliveries)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      eventId: event.id,
      eventType: event.type,
      automationId: automation.id,
      runId: run.id,
      actionIndex: 0,
      idempotencyKey: `automation:${run.id}:0`,
      destination: 'endpoint',
      status: 'discarded',
      discardReason: 'max_attempts',
    })
    .returning();
  return delivery.id;
}

function send(c: Client, r: AnyRoute, path: string, body?: unknown, headers?: Record<string, string>) {
  return c.request(r.method.toUpperCase(), path, { body, headers });
}

describe('route table', () => {
  it('every route has the scope of docs/api.md "Keys, limits"', () => {
    const actual = Object.fromEntries(apiRoutes.filter((r) => !r.public).map((r) => [label(r), r.scope]));
    expect(actual).toEqual(expectedScopes);
  });

  it('exactly the widget operations (the four of docs/api.md and the slot holds) are open to publishable keys, exactly POST /venues and POST /webhook-secret/rotate are organisation-wide', () => {
    expect(
      apiRoutes
        .filter((r) => r.widget)
        .map(label)
        .sort(),
    ).toEqual([...widgetOperations].sort());
    expect(
      apiRoutes
        .filter((r) => r.organisationWide)
        .map(label)
        .sort(),
    ).toEqual([...organisationWide].sort());
  });
});

describe('scopes (docs/api.md "Keys, limits" rule 5)', () => {
  it('a key without the scope gets 403 insufficient_scope naming it, on every route', async () => {
    const t = await createTenant();
    for (const r of keyed.filter((x) => x.scope)) {
      const key = await createKey(t.organisationId, {
        scopes: Object.values(expectedScopes).filter((s): s is string => !!s && s !== r.scope),
      });
      const res = await send(client(server.url, key), r, fillPath(r, { id: t.venueId }), r.body ? {} : undefined);
      expectError(res, 403, 'insufficient_scope', label(r));
      expect(res.body.error.details.requiredScope, label(r)).toBe(r.scope);
      expect(res.body.livemode, label(r)).toBe(true);
    }
  });
});

describe('publishable keys (docs/api.md "Keys, limits", docs/api.md "Keys, limits")', () => {
  it('403 forbidden, reason publishable_key, everywhere but the widget operations', async () => {
    const t = await createTenant();
    const widget = await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    const c = client(server.url, widget);
    for (const r of keyed) {
      const res = await send(c, r, fillPath(r, { id: t.venueId }), r.body ? {} : undefined, { origin: 'https://shop.example' });
      if (widgetOperations.includes(label(r))) {
        expect(res.body?.error?.details?.reason, label(r)).not.toBe('publishable_key');
      } else {
        expectError(res, 403, 'forbidden', label(r));
        expect(res.body.error.details.reason, label(r)).toBe('publishable_key');
      }
    }
  });

  it('CORS preflight answers the widget paths for any origin', async () => {
    for (const op of widgetOperations) {
      const [method, path] = op.split(' ');
      const origin = `https://${randomUUID().slice(0, 8)}.example`;
      const res = await fetch(`${server.url}/api/v1${path}`, {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': method,
          'access-control-request-headers': 'authorization, content-type, idempotency-key',
        },
      });
      expect(res.status, op).toBeLessThan(300);
      expect(res.headers.get('access-control-allow-origin'), op).toBe(origin);
      expect(res.headers.get('access-control-allow-methods'), op).toContain(method);
      expect(res.headers.get('access-control-allow-headers')?.toLowerCase(), op).toContain('authorization');
    }
  });
});

describe('venue-limited keys (docs/api.md "Keys, limits")', () => {
  it('403 forbidden on the organisation-wide operations', async () => {
    const t = await createTenant();
    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [t.venueId] }));
    expectError(await limited.post('/venues', { name: 'X', timezone: 'UTC', countryCode: 'GB' }), 403, 'forbidden', 'POST /venues');
    expectError(await limited.post('/webhook-secret/rotate', {}), 403, 'forbidden', 'POST /webhook-secret/rotate');
  });
});

describe('malformed path ids (docs/api.md "Requests")', () => {
  it('404 not_found JSON for every id of every route', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const r of apiRoutes) {
      for (const name of routeParams(r)) {
        for (const bad of ['not-a-uuid', '123', `${randomUUID()}x`]) {
          const res = await send(c, r, fillPath(r, { id: t.venueId, [name]: bad }), r.body ? {} : undefined);
          expectError(res, 404, 'not_found', `${label(r)} with ${name}=${bad}`);
          expect(res.body.livemode).toBe(true);
        }
      }
    }
  });
});

describe('list parameters (docs/api.md "Requests")', () => {
  it('every list takes limit, cursor and changedAfter, and names the bad one', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const lists = apiRoutes.filter(isList);
    expect(lists.length).toBeGreaterThan(15);
    // The lists under a reservation (its history) and under a delivery (its attempts) need one.
    await configureVenue(t.venueId);
    const reservationId = (await c.post('/reservations', { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 }))
      .body.reservation.id;
    const deliveryId = await insertDelivery(t, c);
    const parentOf = (r: AnyRoute) =>
      r.path.startsWith('/reservations/:id') ? reservationId : r.path.startsWith('/webhook-deliveries/:id') ? deliveryId : t.venueId;
    for (const r of lists) {
      const base = `${fillPath(r, { id: parentOf(r) })}?${queryKeys(r).includes('venueId') ? `venueId=${t.venueId}&` : ''}`;
      const ok = await c.get(`${base}limit=1`);
      expect(ok.status, `${label(r)}: ${ok.text}`).toBe(200);
      expect(Object.keys(ok.body).sort(), label(r)).toEqual(expect.arrayContaining(['data', 'nextCursor', 'livemode']));
      const changed = await c.get(`${base}changedAfter=${encodeURIComponent('2020-01-01T00:00:00.000Z')}`);
      expect(changed.status, `${label(r)} changedAfter: ${changed.text}`).toBe(200);
      for (const [query, field] of [
        ['limit=0', 'limit'],
        ['limit=201', 'limit'],
        ['limit=abc', 'limit'],
        ['limit=1.5', 'limit'],
        ['cursor=garbage', 'cursor'],
        ['changedAfter=yesterday', 'changedAfter'],
        ['changedAfter=2026-02-30T10:00:00Z', 'changedAfter'],
      ]) {
        const res = await c.get(`${base}${query}`);
        expectError(res, 400, 'invalid_request', `${label(r)} ${query}`);
        expect(res.body.error.details.fields, `${label(r)} ${query}`).toEqual([field]);
      }
    }
  });
});

describe('request bodies (docs/api.md "Requests")', () => {
  it('unknown body fields → 400 naming them, on every write', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const r of apiRoutes.filter((x) => x.method !== 'get')) {
      const res = await send(c, r, fillPath(r, { id: t.venueId }), { surpriseField: 1 });
      expectError(res, 400, 'invalid_request', label(r));
      expect(res.body.error.details.fields, label(r)).toContain('surpriseField');
      expect(res.body.livemode).toBe(true);
    }
  });
});

describe('OpenAPI (GET /openapi.json)', () => {
  it('documents every route with its parameters and request schema, version 1.0.0', async () => {
    const res = await client(server.url).get('/openapi.json');
    expect(res.status).toBe(200);
    expect(res.body.info.version).toBe('1.0.0');
    expect(res.body.paths['/webhook-secret/rotate'].post.requestBody.required).toBe(false);
    expect(res.body.paths['/venues'].post.requestBody.required).toBe(true);
    for (const r of apiRoutes) {
      const op = res.body.paths[r.path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[r.method];
      expect(op, label(r)).toBeDefined();
      const documented = (op.parameters ?? []).map((p: { name: string; in: string }) => `${p.in}:${p.name}`);
      for (const name of routeParams(r)) expect(documented, label(r)).toContain(`path:${name}`);
      for (const name of queryKeys(r)) expect(documented, label(r)).toContain(`query:${name}`);
      if (r.body) expect(op.requestBody?.content?.['application/json']?.schema, label(r)).toBeDefined();
      if (r.body) expect(op.requestBody.required, label(r)).toBe(!r.body.safeParse({}).success);
    }
  });
});

describe('routing (docs/api.md "Requests", docs/api.md "Requests")', () => {
  it('405 with an empty body and Allow listing the methods of the path, for every path', async () => {
    const byPath = new Map<string, string[]>();
    for (const r of apiRoutes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r.method.toUpperCase()]);
    for (const [path, methods] of byPath) {
      const allowed = new Set(methods.includes('GET') ? [...methods, 'HEAD'] : methods);
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => !allowed.has(m))) {
        const res = await fetch(`${server.url}/api/v1${path.replace(/:([A-Za-z]+)/g, () => randomUUID())}`, { method });
        expect(res.status, `${method} ${path}`).toBe(405);
        expect(await res.text(), `${method} ${path}`).toBe('');
        expect(new Set(res.headers.get('allow')?.split(', ')), `${method} ${path}`).toEqual(allowed);
      }
    }
  });

  it('an unknown path answered to a recognised key: 404 not_found with livemode and the rate-limit headers', async () => {
    const t = await createTenant({ test: true });
    for (const path of ['/nothing-here', `/venues/${randomUUID()}/nothing`, '/reservations/a/b/c']) {
      const res = await client(server.url, t.key).get(path);
      expectError(res, 404, 'not_found', path);
      expect(res.body.livemode, path).toBe(false);
      expect(res.headers.get('x-ratelimit-limit'), path).not.toBeNull();
    }
    const anonymous = await client(server.url).get('/nothing-here');
    expectError(anonymous, 404, 'not_found', 'without a key');
    expect(anonymous.body.livemode).toBeUndefined();
  });

  it('a badly percent-encoded path id is a 404, not a 500', async () => {
    const t = await createTenant();
    for (const path of ['/venues/%ZZ', '/reservations/%E0%A4%A', `/venues/${t.venueId}/shifts/%`]) {
      const res = await client(server.url, t.key).get(path);
      expectError(res, 404, 'not_found', path);
    }
  });
});

describe('hostile input never gives a 500', () => {
  it('bodies that are not JSON objects → 400 naming body, on every write', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const r of apiRoutes.filter((x) => x.method !== 'get')) {
      for (const raw of ['[1]', 'null', '"text"', '42', 'true', '{"a":']) {
        const res = await c.request(r.method.toUpperCase(), fillPath(r, { id: t.venueId }), {
          rawBody: raw,
          headers: { 'content-type': 'application/json' },
        });
        expectError(res, 400, 'invalid_request', `${label(r)} ${raw}`);
        expect(res.body.error.details.fields, `${label(r)} ${raw}`).toEqual(['body']);
      }
    }
  });

  it('repeated, huge or strange query values → 400 naming the parameter, on every GET', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const r of apiRoutes.filter((x) => x.method === 'get' && x.query)) {
      const path = fillPath(r, { id: t.venueId });
      for (const name of queryKeys(r)) {
        for (const q of [`${name}=1&${name}=2`, `${name}=${'9'.repeat(5000)}`, `${name}=%00`]) {
          const res = await c.get(`${path}?${q}`);
          expect(res.status, `${label(r)} ?${q.slice(0, 40)}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
          if (res.status !== 400) continue;
          // A parameter meant to repeat takes both values; the 400 is then another parameter's.
          if (repeatable.includes(`${label(r)} ${name}`) && q === `${name}=1&${name}=2`)
            expect(res.body.error.details.fields, `${label(r)} ?${q}`).not.toContain(name);
          else expect(res.body.error.details.fields, `${label(r)} ?${q.slice(0, 40)}`).toContain(name);
        }
      }
    }
  });
});

describe('malformed query values beside valid ones', () => {
  it('→ 400 naming the parameter (never a 500), on every GET with a query', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const c = client(server.url, t.key);
    const day = localDate(1);
    const valid: Record<string, string> = {
      venueId: t.venueId,
      serviceDate: day,
      time: '19:00',
      partySize: '2',
      from: day,
      to: day,
      phone: '+390612345678',
    };
    const bad = ['2026-02-30', '24:00', '-1', '0', '1.5', '1e400', 'abc', '', '9'.repeat(400), '2026-13-01T00:00:00Z'];
    for (const r of apiRoutes.filter((x) => x.method === 'get' && x.query)) {
      const required = queryKeys(r).filter((k) => k in valid && !(r.query!.shape[k] as z.ZodType).safeParse(undefined).success);
      for (const name of queryKeys(r)) {
        for (const value of bad) {
          const params = new URLSearchParams(Object.fromEntries(required.filter((k) => k !== name).map((k) => [k, valid[k]])));
          params.set(name, value);
          const res = await c.get(`${fillPath(r, { id: t.venueId })}?${params}`);
          expect(res.status, `${label(r)} ${name}=${value.slice(0, 20)}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
          if (res.status === 400)
            expect(res.body.error.details.fields.length, `${label(r)} ${name}=${value.slice(0, 20)}`).toBeGreaterThan(0);
        }
      }
    }
  });
});

describe('dates PostgreSQL cannot hold', () => {
  it('year 0000 → 400 naming the field, in bodies and queries', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const c = client(server.url, t.key);
    const created = await c.post('/reservations', { venueId: t.venueId, serviceDate: '0000-01-01', time: '19:00', partySize: 2 });
    expectError(created, 400, 'invalid_request', 'POST /reservations');
    expect(created.body.error.details.fields).toEqual(['serviceDate']);
    const slots = await c.get(`/availability/slots?venueId=${t.venueId}&serviceDate=0000-12-31&partySize=2`);
    expectError(slots, 400, 'invalid_request', 'GET /availability/slots');
    expect(slots.body.error.details.fields).toEqual(['serviceDate']);
  });
});

describe('the NUL character (PostgreSQL text cannot hold it)', () => {
  it('→ 400 naming the field, in bodies, nested rows and query strings', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const venue = await c.post('/venues', { name: 'a\u0000b', timezone: 'UTC', countryCode: 'GB' });
    expectError(venue, 400, 'invalid_request', 'POST /venues');
    expect(venue.body.error.details.fields).toEqual(['name']);
    const imported = await c.post('/imports/reservations', { rows: [{ venueId: t.venueId, guestName: '\u0000' }] });
    expectError(imported, 400, 'invalid_request', 'POST /imports/reservations');
    expect(imported.body.error.details.fields).toEqual(['rows.0.guestName']);
    const keyed = await c.post('/imports/guests', { rows: [{ ['x\u0000']: 1 }] });
    expect(keyed.status).toBe(400);
    const listed = await c.get('/guests?search=ab%00c');
    expectError(listed, 400, 'invalid_request', 'GET /guests');
    expect(listed.body.error.details.fields).toEqual(['search']);
  });

  it('a deeply nested body is a 400, not a stack overflow', async () => {
    const t = await createTenant();
    const depth = 100_000;
    const res = await client(server.url, t.key).request('POST', '/imports/guests', {
      rawBody: `{"rows":${'['.repeat(depth)}${']'.repeat(depth)}}`,
      headers: { 'content-type': 'application/json' },
    });
    expectError(res, 400, 'invalid_request', 'nested');
  });
});

describe('limits (docs/api.md "Keys, limits")', () => {
  it('a list answers 50 rows when limit is absent', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (let i = 0; i < 51; i++) await c.post('/venues', { name: `V${i}`, timezone: 'UTC', countryCode: 'GB' });
    const page = await c.get('/venues');
    expect(page.body.data).toHaveLength(50);
    expect(page.body.nextCursor).toEqual(expect.any(String));
    expect((await c.get('/venues?limit=200')).body.data).toHaveLength(52);
  });

  it('bodies: 1 MiB, imports 5 MiB, over it 413 payload_too_large', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const rows = (bytes: number) => ({ rows: [{ venueId: t.venueId, notes: 'x'.repeat(bytes) }] });
    expectError(await c.post('/imports/reservations', rows(5 * 1024 * 1024 + 10)), 413, 'payload_too_large', 'import over 5 MiB');
    expect((await c.post('/imports/reservations', rows(2 * 1024 * 1024))).status).toBe(202);
    expectError(
      await c.post('/guests', { venueId: t.venueId, phone: '+39 06 1234 5678', notes: 'x'.repeat(1024 * 1024 + 10) }),
      413,
      'payload_too_large',
      'guest over 1 MiB',
    );
  });
});

/** One resource of every kind in a second venue of one organisation, made through the API. */
async function populateVenue(c: Client, venueId: string) {
  const fixture = await configureVenue(venueId);
  const ok = (res: ApiResponse, what: string) => {
    expect(res.status, `${what}: ${res.text}`).toBeLessThan(300);
    return res.body;
  };
  const base = `/venues/${venueId}`;
  const ids: Record<string, string> = { id: venueId, planId: fixture.planId, tableId: Object.values(fixture.tableIds)[0] };
  const ruleIds: Record<string, string> = {
    shifts: ok(
      await c.post(`${base}/shifts`, {
        name: 'Lunch',
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        startTime: '12:00',
        lastSeatingTime: '14:00',
        endTime: '15:00',
      }),
      'shift',
    ).shift.id,
    closures: ok(await c.post(`${base}/closures`, { from: '2030-01-01', to: '2030-01-02' }), 'closure').closure.id,
    'turn-time-rules': ok(
      await c.post(`${base}/turn-time-rules`, { minPartySize: 13, maxPartySize: 20, durationMinutes: 150 }),
      'turn-time rule',
    ).turnTimeRule.id,
    'pacing-rules': ok(
      await c.post(`${base}/pacing-rules`, { shiftId: fixture.shiftIds[0], maxCovers: 40, windowMinutes: 30 }),
      'pacing rule',
    ).pacingRule.id,
  };
  const guest = ok(await c.post('/guests', { venueId, phone: '+39 06 1234 5678', firstName: 'Ada' }), 'guest').guest;
  const byPrefix: Record<string, string> = {
    '/guests': guest.id,
    '/service-tags': ok(await c.post('/service-tags', { venueId, name: 'VIP' }), 'service tag').serviceTag.id,
    '/reservations': ok(
      await c.post('/reservations', { venueId, serviceDate: localDate(1), time: '19:00', partySize: 2, guestId: guest.id }),
      'reservation',
    ).reservation.id,
    '/waitlist': ok(await c.post('/waitlist', { venueId, serviceDate: localDate(1), partySize: 2, name: 'Bob' }), 'waitlist').entry.id,
    '/automations': ok(
      await c.post('/automations', {
        venueId,
        name: 'A',
        eventTypes: ['reservation_created'],
        action: { type: 'partner_notification', url: 'https://crm.example.com/h' },
      }),
      'automation',
    ).automation.id,
    '/webhook-endpoints': ok(await c.post('/webhook-endpoints', { venueId, url: 'https://crm.example.com/e' }), 'endpoint').webhookEndpoint
      .id,
  };
  /** Path values that name this venue's resources for route r. */
  const valuesFor = (r: AnyRoute): Record<string, string> | undefined => {
    if (r.path.startsWith('/venues/')) {
      const kind = r.path.split('/')[3];
      return { ...ids, ruleId: ruleIds[kind] };
    }
    const prefix = Object.keys(byPrefix).find((p) => r.path.startsWith(`${p}/:id`));
    return prefix ? { id: byPrefix[prefix] } : undefined;
  };
  return { valuesFor };
}

describe('resources of one venue, route by route', () => {
  it('a key limited to another venue gets 404 on every one of them, and lists filtered on that venue are 404', async () => {
    const t = await createTenant();
    const [other] = await db()
      .insert(venues)
      .values({ organisationId: t.organisationId, name: 'Other', timezone: 'Europe/Rome', countryCode: 'IT' })
      .returning();
    const { valuesFor } = await populateVenue(client(server.url, t.key), other.id);
    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [t.venueId] }));
    const checked: string[] = [];
    for (const r of apiRoutes.filter((x) => routeParams(x).length)) {
      const values = valuesFor(r);
      if (!values) continue;
      checked.push(label(r));
      const res = await send(limited, r, fillPath(r, values), r.method === 'get' ? undefined : {});
      if (res.status === 400) continue; // a write whose body is checked before the resource; the empty-body case is below
      expectError(res, 404, 'not_found', label(r));
      expect(res.body.livemode).toBe(true);
    }
    expect(checked.length).toBeGreaterThan(40);
    const day = localDate(1);
    const queryValues: Record<string, string> = {
      venueId: other.id,
      serviceDate: day,
      time: '19:00',
      partySize: '2',
      from: day,
      to: day,
      phone: '+390612345678',
    };
    for (const r of apiRoutes.filter((x) => x.method === 'get' && queryKeys(x).includes('venueId'))) {
      const query = queryKeys(r).filter(
        (k) => k in queryValues && (k === 'venueId' || !(r.query!.shape[k] as z.ZodType).safeParse(undefined).success),
      );
      const res = await limited.get(`${r.path}?${query.map((k) => `${k}=${encodeURIComponent(queryValues[k])}`).join('&')}`);
      expectError(res, 404, 'not_found', label(r));
    }
    const writes: [string, unknown][] = [
      ['/guests', { venueId: other.id, phone: '+39 06 1234 0000' }],
      ['/service-tags', { venueId: other.id, name: 'Hidden' }],
      ['/reservations', { venueId: other.id, serviceDate: day, time: '19:00', partySize: 2 }],
      ['/waitlist', { venueId: other.id, serviceDate: day, partySize: 2, name: 'Eve' }],
      [
        '/automations',
        {
          venueId: other.id,
          name: 'A',
          eventTypes: ['reservation_created'],
          action: { type: 'partner_notification', url: 'https://crm.example.com/h' },
        },
      ],
      ['/webhook-endpoints', { venueId: other.id, url: 'https://crm.example.com/x' }],
      ['/webhook-endpoints/test', { venueId: other.id, url: 'https://crm.example.com/x' }],
    ];
    for (const [path, body] of writes) expectError(await limited.post(path, body), 404, 'not_found', `POST ${path}`);
  });

  it('lists without a venue filter never show another venue to a limited key', async () => {
    const t = await createTenant();
    const [other] = await db()
      .insert(venues)
      .values({ organisationId: t.organisationId, name: 'Other', timezone: 'Europe/Rome', countryCode: 'IT' })
      .returning();
    await populateVenue(client(server.url, t.key), other.id);
    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [t.venueId] }));
    for (const r of apiRoutes.filter((x) => isList(x) && routeParams(x).length === 0)) {
      const res = await limited.get(`${r.path}?limit=200`);
      expect(res.status, `${label(r)}: ${res.text}`).toBe(200);
      expect(JSON.stringify(res.body.data), label(r)).not.toContain(other.id);
    }
  });

  it('every single-resource GET sends ETag "<updatedAt>" and livemode; instants are written with milliseconds in UTC', async () => {
    const t = await createTenant({ test: true });
    const c = client(server.url, t.key);
    const { valuesFor } = await populateVenue(c, t.venueId);
    for (const r of apiRoutes.filter((x) => x.method === 'get' && routeParams(x).length)) {
      const values = valuesFor(r);
      if (!values) continue;
      const res = await c.get(`${fillPath(r, values)}${isList(r) ? '?limit=200' : ''}`);
      expect(res.status, `${label(r)}: ${res.text}`).toBe(200);
      expect(res.body.livemode, label(r)).toBe(false);
      for (const instant of res.text.match(/"\d{4}-\d\d-\d\dT[^"]*"/g) ?? []) {
        expect(instant, label(r)).toMatch(/^"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z"$/);
      }
      if (isList(r) || views.includes(label(r))) continue;
      const [resource] = Object.values(res.body).filter((v) => v && typeof v === 'object') as { updatedAt?: string }[];
      expect(resource?.updatedAt, label(r)).toEqual(expect.any(String));
      expect(res.headers.get('etag'), label(r)).toBe(`"${resource.updatedAt}"`);
    }
  });
});

describe('idempotency on every write (docs/api.md "Keys, limits" and "Idempotency")', () => {
  // Routes that hand out a secret or an import keep their own record of the key (`idempotency: 'manual'`); their successes replay below.
  it('a repeated 4xx answer is replayed byte for byte, and the same key with another body is 422', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    // Releasing a hold succeeds whether or not it exists (docs/reservations.md "Slot holds"): its replay is checked with the successes below.
    for (const r of apiRoutes.filter(
      (x) => x.method !== 'get' && x.idempotency !== 'manual' && label(x) !== 'DELETE /availability/holds/:id',
    )) {
      const path = fillPath(r, { id: routeParams(r).length > 1 ? t.venueId : randomUUID() });
      const key = `conf-${randomUUID()}`;
      const body = r.body ? { surpriseField: 1 } : {};
      const first = await send(c, r, path, body, { 'idempotency-key': key });
      const again = await send(c, r, path, body, { 'idempotency-key': key });
      expect(first.status, `${label(r)}: ${first.text}`).toBeGreaterThanOrEqual(400);
      expect(again.headers.get('idempotent-replayed'), label(r)).toBe('true');
      expect(again.text, label(r)).toBe(first.text);
      expect(again.body.error.requestId, label(r)).toBe(again.headers.get('x-request-id'));
      expectError(await send(c, r, path, { ...body, other: 2 }, { 'idempotency-key': key }), 422, 'idempotency_key_reused', label(r));
    }
  });

  it('a successful write is replayed with Idempotent-Replayed and changes nothing twice', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const { valuesFor } = await populateVenue(c, t.venueId);
    const writes: [string, string, unknown][] = [
      ['POST', '/guests', { venueId: t.venueId, phone: '+39 06 7654 3210' }],
      ['POST', '/service-tags', { venueId: t.venueId, name: 'Regular' }],
      ['POST', '/webhook-endpoints', { venueId: t.venueId, url: 'https://crm.example.com/other' }],
      ['POST', '/webhook-secret/rotate', { overlapMinutes: 0 }],
      ['POST', '/reservations', { venueId: t.venueId, serviceDate: localDate(2), time: '20:00', partySize: 2 }],
      ['POST', '/availability/holds', { venueId: t.venueId, serviceDate: localDate(2), time: '21:00', partySize: 2 }],
      ['DELETE', `/availability/holds/${randomUUID()}`, undefined],
      [
        'PATCH',
        fillPath(
          apiRoutes.find((r) => label(r) === 'PATCH /venues/:id')!,
          valuesFor(apiRoutes.find((r) => label(r) === 'PATCH /venues/:id')!),
        ),
        { name: 'Renamed' },
      ],
    ];
    for (const [method, path, body] of writes) {
      const key = `ok-${randomUUID()}`;
      const first = await c.request(method, path, { body, headers: { 'idempotency-key': key } });
      const again = await c.request(method, path, { body, headers: { 'idempotency-key': key } });
      expect(first.status, `${method} ${path}: ${first.text}`).toBeLessThan(300);
      expect(again.status, `${method} ${path}`).toBe(first.status);
      expect(again.headers.get('idempotent-replayed'), `${method} ${path}`).toBe('true');
      expect(again.text, `${method} ${path}`).toBe(first.text);
    }
  });
});

describe('the four widget operations with a publishable key (docs/api.md "Keys, limits", docs/api.md "Keys, limits")', () => {
  it('work from an allowed origin with CORS headers, livemode and the per-IP limit; refuse other origins', async () => {
    const t = await createTenant({ test: true });
    await configureVenue(t.venueId);
    const widgetKey = await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    expect(widgetKey.startsWith('gspk_test_')).toBe(true);
    const widget = client(server.url, widgetKey);
    const origin = { origin: 'https://shop.example' };
    const day = localDate(1);
    const reads = [
      `/availability?venueId=${t.venueId}&serviceDate=${day}&time=19:00&partySize=2`,
      `/availability/slots?venueId=${t.venueId}&serviceDate=${day}&partySize=2`,
      `/availability/days?venueId=${t.venueId}&from=${day}&to=${localDate(3)}&partySize=2`,
    ];
    for (const path of reads) {
      const res = await widget.get(path, origin);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      expect(res.body.livemode).toBe(false);
      expect(res.headers.get('access-control-allow-origin')).toBe('https://shop.example');
      expect(res.headers.get('x-ratelimit-limit')).toBe('120');
      for (const bad of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
        const refused = await widget.get(path, bad);
        expectError(refused, 403, 'forbidden', `${path} from ${JSON.stringify(bad)}`);
        expect(refused.body.error.details.reason).toBe('origin_not_allowed');
      }
    }
    const booking = {
      venueId: t.venueId,
      serviceDate: day,
      time: '19:00',
      partySize: 2,
      guest: { phone: '+39 06 1234 5678', firstName: 'Ada' },
    };
    const created = await widget.post('/reservations', booking, origin);
    expect(created.status, created.text).toBe(201);
    expect(created.headers.get('access-control-allow-origin')).toBe('https://shop.example');
    expect(created.body.livemode).toBe(false);
    expect(created.body.reservation).toMatchObject({ guest: null, guestId: null });
    expect(created.body.reservation).not.toHaveProperty('guestDetails');
    for (const extra of [{ externalRef: 'x' }, { serviceTags: ['VIP'] }, { status: 'confirmed' }, { source: 'phone' }, { force: true }]) {
      const refused = await widget.post('/reservations', { ...booking, time: '20:00', ...extra }, origin);
      expectError(refused, 403, 'forbidden', JSON.stringify(extra));
      expect(refused.body.error.details.reason).toBe('publishable_key');
    }
  });
});

// Each case starts several CLI processes (the compiled CLI, as production runs it: seconds on a busy
// machine); the test's timeout guards hangs, it is not the point.
describe('command line (README.md "Command line")', { timeout: 180_000 }, () => {
  const cli = async (...args: string[]) => {
    try {
      const { stdout } = await promisify(execFile)(process.execPath, [compiledEntry('src/cli/main.ts'), ...args], { env: process.env });
      return { code: 0, stdout };
    } catch (err) {
      const failed = err as { code: number; stdout: string };
      return { code: failed.code, stdout: failed.stdout };
    }
  };
  const oneJsonObject = (stdout: string) => {
    expect(stdout.trim().split('\n'), stdout).toHaveLength(1);
    return JSON.parse(stdout);
  };

  it('demo --json prints exactly {organisationId, venueId, keys: {live, test, publishable}}, and the keys work', async () => {
    const run = await cli('demo', '--json');
    expect(run.code).toBe(0);
    const demo = oneJsonObject(run.stdout);
    expect(Object.keys(demo).sort()).toEqual(['keys', 'organisationId', 'venueId']);
    expect(Object.keys(demo.keys).sort()).toEqual(['live', 'publishable', 'test']);
    expect(demo.keys.live).toMatch(/^gsk_[A-Za-z0-9]{43}$/);
    expect(demo.keys.test).toMatch(/^gsk_test_[A-Za-z0-9]{43}$/);
    expect(demo.keys.publishable).toMatch(/^gspk_[A-Za-z0-9]{43}$/);
    const venue = await client(server.url, demo.keys.live).get(`/venues/${demo.venueId}`);
    expect(venue.status).toBe(200);
    expect(
      (await client(server.url, demo.keys.live).get(`/venues/${demo.venueId}/tables?limit=200`)).body.data.length,
    ).toBeGreaterThanOrEqual(20);
    expect((await client(server.url, demo.keys.test).get('/me')).body.livemode).toBe(false);
  });

  it('every failure with --json is one JSON object {error} and exit code 1, unknown options included', async () => {
    const org = oneJsonObject((await cli('org:create', '--name', 'CLI', '--json')).stdout);
    for (const args of [
      ['org:create', '--name', 'X', '--bogus'],
      ['org:create', '--name'],
      ['nope'],
      ['key:create', '--org', org.id, '--kind', 'live', '--rate-limit', '99999999999'],
    ]) {
      const run = await cli(...args, '--json');
      expect(run.code, args.join(' ')).toBe(1);
      const { error } = oneJsonObject(run.stdout);
      expect(error, args.join(' ')).toEqual(expect.any(String));
      expect(error, args.join(' ')).not.toMatch(/query|insert|select/i);
    }
  });

  it('a publishable key refuses origins that are not scheme://host[:port]', async () => {
    const org = oneJsonObject((await cli('org:create', '--name', 'CLI', '--json')).stdout);
    for (const origin of ['shop.example', 'https://shop.example/', 'https://shop.example/book']) {
      const run = await cli('key:create', '--org', org.id, '--kind', 'publishable', '--origins', origin, '--json');
      expect(run.code, origin).toBe(1);
      expect(oneJsonObject(run.stdout).error, origin).toContain('--origins');
    }
    const ok = oneJsonObject(
      (
        await cli(
          'key:create',
          '--org',
          org.id,
          '--kind',
          'publishable',
          '--origins',
          'https://shop.example,http://localhost:3000',
          '--json',
        )
      ).stdout,
    );
    expect(ok.key).toMatch(/^gspk_/);
  });
});

/** The schema inside optional, nullable, default and array wrappers. */
function innermost(schema: z.ZodType): z.ZodType {
  const def = (schema as unknown as { def: { type: string; innerType?: z.ZodType; element?: z.ZodType } }).def;
  if (def.innerType) return innermost(def.innerType);
  if (def.type === 'array' && def.element) return innermost(def.element);
  return schema;
}

/** Each field of a body and of the objects nested in it (one level), with how to send a value in it. */
function fieldsOf(body: z.ZodObject): [string, (value: unknown) => unknown][] {
  const out: [string, (value: unknown) => unknown][] = [];
  for (const [name, schema] of Object.entries(body.shape)) {
    out.push([name, (value) => ({ [name]: value })]);
    const inner = innermost(schema as z.ZodType);
    if (!('shape' in inner)) continue;
    // Sent both as an object and as an array of one object: whichever the field is, one form reaches the nested schema.
    for (const sub of Object.keys((inner as z.ZodObject).shape)) {
      out.push([`${name}.${sub}`, (value) => ({ [name]: { [sub]: value } })]);
      out.push([`${name}.0.${sub}`, (value) => ({ [name]: [{ [sub]: value }] })]);
    }
  }
  return out;
}

describe('malformed body values', () => {
  it('each field of each write, alone, with a hostile value → never a 500', async () => {
    // A key without a practical rate limit: a 429 would hide what the later routes answer.
    const t = await createTenant({ key: { rateLimitPerMinute: 1_000_000 } });
    const c = client(server.url, t.key);
    const { valuesFor } = await populateVenue(c, t.venueId);
    const hostile: unknown[] = [
      null,
      [],
      {},
      [{}],
      'x'.repeat(300),
      '',
      -1,
      0,
      2 ** 31,
      1e308,
      1.5,
      true,
      '2026-02-30',
      '24:00',
      '2026-02-30T10:00:00Z',
    ];
    for (const r of apiRoutes.filter((x) => x.method !== 'get' && x.body && 'shape' in x.body)) {
      const path = fillPath(r, valuesFor(r) ?? { id: t.venueId });
      for (const [field, wrap] of fieldsOf(r.body as z.ZodObject)) {
        for (const value of hostile) {
          const res = await send(c, r, path, wrap(value));
          expect(res.status, `${label(r)} ${field}=${JSON.stringify(value).slice(0, 20)}: ${res.text.slice(0, 200)}`).toBeLessThan(500);
        }
      }
    }
  }, 90_000);

  it('an address that is not a URL → 400 naming it, wherever a webhook address is taken', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const url of ['not a url', 'https://', 'x'.repeat(300)]) {
      const endpoint = await c.post('/webhook-endpoints', { venueId: t.venueId, url });
      expectError(endpoint, 400, 'invalid_request', url);
      expect(endpoint.body.error.details.fields).toEqual(['url']);
      const automation = await c.post('/automations', {
        venueId: t.venueId,
        name: 'A',
        eventTypes: ['reservation_created'],
        action: { type: 'partner_notification', url },
      });
      expectError(automation, 400, 'invalid_request', url);
      expect(automation.body.error.details.fields).toEqual(['action.url']);
      expectError(await c.post('/webhook-endpoints/test', { venueId: t.venueId, url }), 400, 'invalid_request', url);
    }
  });
});
