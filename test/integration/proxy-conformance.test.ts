import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/http/openapi.js';
import { apiRoutes } from '../../src/routes/index.js';
import { client, createTenant, type ApiResponse, type Client, type Tenant } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useWebhookPipeline } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';

/**
 * An independent check of the contract: Stoplight Prism, in proxy mode, in front of the real server
 * with every worker, validates each request and each response of a tour of every operation against
 * the OpenAPI document the server publishes, and reports what does not match in the
 * `sl-violations` header. The tour sends valid requests only, so any violation (request or
 * response) is a difference between the document and the server. The live stream
 * (GET /events/stream) never ends, which a proxy that validates whole bodies cannot wait for; the
 * event-stream tests hold it to its contract.
 */

const root = path.resolve(import.meta.dirname, '../..');
const pipeline = useWebhookPipeline();
const openEnded = new Set(['GET /events/stream']);

let prism: ChildProcess;
let proxyUrl: string;
const operations = new Map<string, RegExp>();
const visited = new Set<string>();
const violations: string[] = [];

beforeAll(async () => {
  const document = buildOpenApi(apiRoutes) as { paths: Record<string, Record<string, unknown>>; servers?: unknown };
  // Prism matches request paths against the document's paths; the server's base path goes into them.
  const { servers: _relative, ...rest } = document;
  const paths = Object.fromEntries(Object.entries(document.paths).map(([p, item]) => [`/api/v1${p}`, item]));
  for (const [p, item] of Object.entries(document.paths)) {
    for (const method of Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
      operations.set(`${method.toUpperCase()} ${p}`, new RegExp(`^${p.replace(/\{[^}]+\}/g, '[^/]+')}$`));
    }
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'prism-'));
  const specFile = path.join(dir, 'openapi.json');
  writeFileSync(specFile, JSON.stringify({ ...rest, paths }));
  const port = await freePort();
  prism = spawn(
    process.execPath,
    [
      path.join(root, 'node_modules/@stoplight/prism-cli/dist/index.js'),
      'proxy',
      specFile,
      pipeline.url,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--errors',
      'false',
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  proxyUrl = `http://127.0.0.1:${port}`;
  await eventually(
    () =>
      fetch(`${proxyUrl}/api/v1/openapi.json`).then(
        (res) => res.status === 200,
        () => false,
      ),
    90_000,
    'Prism to listen',
  );
}, 120_000);

afterAll(() => {
  prism?.kill('SIGTERM');
});

/** The proxied client: records the operation each request matched and the violations Prism reports. */
function proxied(key: string): Client {
  const api = client(proxyUrl, key);
  const record = async <T>(method: string, target: string, response: Promise<ApiResponse<T>>) => {
    const res = await response;
    const pathname = target.split('?')[0];
    const operation = [...operations].find(([name, pattern]) => name.startsWith(`${method} `) && pattern.test(pathname))?.[0];
    if (operation) visited.add(operation);
    const header = res.headers.get('sl-violations');
    if (header) violations.push(`${method} ${target} → ${res.status}: ${header}`);
    return res;
  };
  return {
    request: (method, p, options) => record(method, p, api.request(method, p, options)),
    get: (p, headers) => record('GET', p, api.get(p, headers)),
    post: (p, body, headers) => record('POST', p, api.post(p, body, headers)),
    patch: (p, body, headers) => record('PATCH', p, api.patch(p, body, headers)),
    put: (p, body, headers) => record('PUT', p, api.put(p, body, headers)),
    delete: (p, headers) => record('DELETE', p, api.delete(p, headers)),
  };
}

/** The body of a successful response (Prism checks that its status is a documented one): a tour step that fails says which. */
function ok<T = any>(res: ApiResponse<T>, what: string): T {
  if (res.status < 200 || res.status > 299) throw new Error(`${what}: got ${res.status} ${res.text}`);
  return res.body;
}

describe('Prism proxy over a tour of every operation', () => {
  let tenant: Tenant;
  let api: Client;

  it('answers every operation as the OpenAPI document says, with 0 violations', async () => {
    tenant = await createTenant();
    api = proxied(tenant.key);
    const fixture = await configureVenue(tenant.venueId, {
      tables: [
        { name: 'T2', minSeats: 1, maxSeats: 2 },
        { name: 'T4', minSeats: 2, maxSeats: 4 },
        { name: 'T6', minSeats: 4, maxSeats: 6 },
      ],
      combinations: [['T2', 'T4']],
    });
    const V = `/venues/${tenant.venueId}`;
    const day = localDate(2);

    // The platform, venues and their configuration.
    ok(await api.get('/me'), 'me');
    ok(await api.get('/status'), 'status');
    ok(await api.get('/openapi.json'), 'openapi');
    const venue = ok(await api.post('/venues', { name: 'Bistro', timezone: 'Europe/Paris', countryCode: 'FR' }), 'create venue').venue;
    ok(await api.get('/venues?limit=10'), 'list venues');
    ok(await api.get(`/venues/${venue.id}`), 'get venue');
    ok(await api.patch(`/venues/${venue.id}`, { minNoticeMinutes: 30 }), 'patch venue');
    const rules: Array<[string, string, Record<string, unknown>, Record<string, unknown>]> = [
      [
        'shifts',
        'shift',
        { name: 'Lunch', daysOfWeek: [1, 2, 3, 4, 5], startTime: '12:00', lastSeatingTime: '14:00', endTime: '15:00' },
        { name: 'Pranzo' },
      ],
      ['closures', 'closure', { from: '2030-01-01', to: '2030-01-02', reason: 'Holidays' }, { reason: 'Inventory' }],
      ['turn-time-rules', 'turnTimeRule', { minPartySize: 13, maxPartySize: 20, durationMinutes: 150 }, { durationMinutes: 160 }],
      ['pacing-rules', 'pacingRule', { shiftId: fixture.shiftIds[0], maxCovers: 60, windowMinutes: 30 }, { maxCovers: 80 }],
    ];
    for (const [collection, name, body, patch] of rules) {
      const id = ok(await api.post(`${V}/${collection}`, body), `create ${name}`)[name].id;
      ok(await api.get(`${V}/${collection}`), `list ${collection}`);
      ok(await api.get(`${V}/${collection}/${id}`), `get ${name}`);
      ok(await api.patch(`${V}/${collection}/${id}`, patch), `patch ${name}`);
      ok(await api.delete(`${V}/${collection}/${id}`), `delete ${name}`);
    }

    // The floor: a second plan, replaced, listed; the active plan's tables and areas.
    const [garden, g1, g2, room] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const plan = ok(
      await api.post(`${V}/floor-plans`, {
        name: 'Summer',
        areas: [{ id: garden, name: 'Garden', widthCm: 1000, heightCm: 800 }],
        tables: [
          { id: g1, areaId: garden, name: 'G1', minSeats: 1, maxSeats: 2 },
          { id: g2, areaId: garden, name: 'G2', minSeats: 2, maxSeats: 4 },
        ],
        combinations: [{ tableIds: [g1, g2] }],
      }),
      'create floor plan',
    ).floorPlan;
    ok(await api.get(`${V}/floor-plans`), 'list floor plans');
    const planBody = ok(await api.get(`${V}/floor-plans/${plan.id}`), 'get floor plan').floorPlan;
    ok(
      await api.put(`${V}/floor-plans/${plan.id}`, {
        name: 'Summer 2',
        areas: planBody.areas.map((a: any) => ({ id: a.id, name: a.name, widthCm: a.widthCm, heightCm: a.heightCm })),
        tables: planBody.tables.map((t: any) => ({ id: t.id, areaId: t.areaId, name: t.name, minSeats: t.minSeats, maxSeats: t.maxSeats })),
        combinations: [],
      }),
      'replace floor plan',
    );
    ok(
      await api.post(`/venues/${venue.id}/floor-plans`, {
        name: 'Only',
        areas: [{ id: room, name: 'Room', widthCm: 500, heightCm: 500 }],
        tables: [{ areaId: room, name: 'R1', minSeats: 1, maxSeats: 4 }],
        combinations: [],
      }),
      'plan of the second venue',
    );
    const otherPlan = ok(await api.get(`/venues/${venue.id}/floor-plans`), 'plans of the second venue').data[0];
    ok(await api.post(`/venues/${venue.id}/floor-plans/${otherPlan.id}/activate`), 'activate plan');
    ok(await api.get(`${V}/tables`), 'list tables');
    ok(await api.get(`${V}/areas`), 'list areas');
    ok(await api.patch(`${V}/tables/${fixture.tableIds.T6}`, { isBlocked: false }), 'patch table');

    // Guests and service tags.
    const tag = ok(await api.post('/service-tags', { venueId: tenant.venueId, name: 'VIP' }), 'create tag').serviceTag;
    ok(await api.get(`/service-tags?venueId=${tenant.venueId}`), 'list tags');
    ok(await api.get(`/service-tags/${tag.id}`), 'get tag');
    ok(await api.patch(`/service-tags/${tag.id}`, { name: 'Regular' }), 'patch tag');
    const guest = ok(
      await api.post('/guests', {
        venueId: tenant.venueId,
        phone: '+39 06 1234 5678',
        firstName: 'Ada',
        lastName: 'Lovelace',
        email: 'ada@example.com',
        serviceTags: ['Regular'],
      }),
      'create guest',
    ).guest;
    ok(await api.get(`/guests?venueId=${tenant.venueId}&search=ada`), 'search guests');
    ok(await api.get(`/guests/lookup?venueId=${tenant.venueId}&phone=${encodeURIComponent('06 1234 5678')}`), 'lookup guest');
    ok(await api.get(`/guests/${guest.id}`), 'get guest');
    ok(await api.patch(`/guests/${guest.id}`, { notes: 'Window seat' }), 'patch guest');
    const other = ok(
      await api.post('/guests', { venueId: tenant.venueId, phone: '+39 06 1234 5679', firstName: 'Bob' }),
      'second guest',
    ).guest;
    ok(await api.delete(`/guests/${other.id}`), 'trash guest');
    ok(await api.post(`/guests/${other.id}/restore`), 'restore guest');
    ok(await api.delete(`/service-tags/${tag.id}`), 'delete tag');

    // Webhooks: a destination, an automation, a test delivery, the organisation secret.
    const endpoint = ok(
      await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: pipeline.receiver.url }),
      'create endpoint',
    ).webhookEndpoint;
    ok(await api.get('/webhook-endpoints'), 'list endpoints');
    ok(await api.get(`/webhook-endpoints/${endpoint.id}`), 'get endpoint');
    ok(await api.patch(`/webhook-endpoints/${endpoint.id}`, { url: pipeline.receiver.url }), 'patch endpoint');
    ok(await api.post(`/webhook-endpoints/${endpoint.id}/rotate-secret`, {}), 'rotate endpoint secret');
    ok(await api.post('/webhook-endpoints/test', { venueId: tenant.venueId, url: pipeline.receiver.url }), 'test webhook');
    ok(await api.post('/webhook-secret/rotate', {}), 'rotate organisation secret');
    const automation = ok(
      await api.post('/automations', {
        venueId: tenant.venueId,
        name: 'CRM',
        eventTypes: ['reservation_created', 'reservation_confirmed'],
        action: { type: 'partner_notification', endpointId: endpoint.id },
      }),
      'create automation',
    ).automation;
    ok(await api.get('/automations'), 'list automations');
    ok(await api.get(`/automations/${automation.id}`), 'get automation');
    ok(await api.patch(`/automations/${automation.id}`, { name: 'CRM sync' }), 'patch automation');

    // Availability, a hold, bookings, their changes, history.
    ok(await api.get(`/availability?venueId=${tenant.venueId}&serviceDate=${day}&time=19:00&partySize=2`), 'availability');
    ok(await api.get(`/availability/slots?venueId=${tenant.venueId}&serviceDate=${day}&partySize=2`), 'slots');
    ok(
      await api.get(`/availability/slots?venueId=${tenant.venueId}&serviceDate=${day}&partySize=2&include=unavailable`),
      'explained slots',
    );
    ok(await api.get(`/availability/days?venueId=${tenant.venueId}&from=${localDate(1)}&to=${localDate(14)}&partySize=2`), 'days');
    const hold = ok(
      await api.post('/availability/holds', { venueId: tenant.venueId, serviceDate: day, time: '19:00', partySize: 2 }),
      'hold',
    ).hold;
    ok(await api.get(`/availability/holds/${hold.id}`), 'get hold');
    const held = ok(
      await api.post('/reservations', {
        venueId: tenant.venueId,
        serviceDate: day,
        time: '19:00',
        partySize: 2,
        holdId: hold.id,
        guestId: guest.id,
      }),
      'book the hold',
    ).reservation;
    const spare = ok(
      await api.post('/availability/holds', { venueId: tenant.venueId, serviceDate: day, time: '20:00', partySize: 2 }),
      'second hold',
    ).hold;
    ok(await api.delete(`/availability/holds/${spare.id}`), 'release hold');
    const booking = ok(
      await api.post(
        '/reservations',
        {
          venueId: tenant.venueId,
          serviceDate: day,
          time: '20:00',
          partySize: 4,
          guest: { phone: '+39 347 123 4567', firstName: 'Grace' },
        },
        { 'idempotency-key': 'tour-1' },
      ),
      'book',
    ).reservation;
    ok(
      await api.get(`/reservations?venueId=${tenant.venueId}&from=${day}&to=${day}&status=created,confirmed&limit=10`),
      'list reservations',
    );
    ok(await api.get(`/reservations/${booking.id}`), 'get reservation');
    const confirmed = ok(
      await api.patch(`/reservations/${booking.id}`, { status: 'confirmed' }, { 'if-match': `"${booking.updatedAt}"` }),
      'confirm',
    ).reservation;
    ok(await api.patch(`/reservations/${confirmed.id}`, { notes: 'Birthday', time: '20:15' }), 'move');
    ok(await api.get(`/reservations/${booking.id}/history`), 'history');
    ok(await api.delete(`/reservations/${held.id}`), 'cancel');

    // The waiting list.
    const entry = ok(
      await api.post('/waitlist', {
        venueId: tenant.venueId,
        serviceDate: day,
        partySize: 2,
        name: 'Ada',
        phone: '347 765 4321',
        quotedWaitMinutes: 20,
      }),
      'wait',
    ).entry;
    ok(await api.get(`/waitlist?venueId=${tenant.venueId}`), 'list waitlist');
    ok(await api.get(`/waitlist/quote?venueId=${tenant.venueId}&partySize=2&partySize=4`), 'wait quotes');
    ok(await api.get(`/venues/${tenant.venueId}/turn-times/learned`), 'learned turn times');
    ok(await api.get(`/waitlist/${entry.id}`), 'get entry');
    ok(await api.patch(`/waitlist/${entry.id}`, { quotedWaitMinutes: 25 }), 'patch entry');
    ok(await api.post(`/waitlist/${entry.id}/notify`), 'notify entry');
    ok(await api.post(`/waitlist/${entry.id}/convert`, { time: '21:00' }), 'convert entry');
    const dropped = ok(
      await api.post('/waitlist', { venueId: tenant.venueId, serviceDate: day, partySize: 3, name: 'Bob' }),
      'wait again',
    ).entry;
    ok(await api.delete(`/waitlist/${dropped.id}`), 'cancel entry');

    // Imports, reports, exports.
    const guestImport = ok(
      await api.post('/imports/guests', { rows: [{ venueId: tenant.venueId, phone: '+39 06 5555 0101', firstName: 'Imported' }] }),
      'guest import',
    ).import;
    ok(
      await api.post('/imports/reservations?dryRun=true', {
        rows: [{ venueId: tenant.venueId, serviceDate: localDate(3), time: '19:00', partySize: 2, guestName: 'Dry Run' }],
      }),
      'reservation import dry run',
    );
    ok(
      await api.post('/imports/reservations', {
        rows: [{ venueId: tenant.venueId, serviceDate: localDate(3), time: '19:00', partySize: 2, guestName: 'Imported' }],
      }),
      'reservation import',
    );
    ok(await api.get('/imports'), 'list imports');
    ok(await api.get(`/imports/${guestImport.id}`), 'get import');
    ok(await api.get(`/reports/summary?venueId=${tenant.venueId}&from=${localDate(0)}&to=${localDate(7)}`), 'summary report');
    ok(await api.get(`/reports/occupancy?venueId=${tenant.venueId}&serviceDate=${day}`), 'occupancy report');
    ok(await api.get(`/exports/reservations?venueId=${tenant.venueId}&from=${localDate(0)}&to=${localDate(7)}&format=ndjson`), 'export');

    // Events and the deliveries the automation made of them.
    ok(await api.get('/events?limit=20'), 'list events');
    const deliveries = await eventually(
      async () => {
        const page = ok(await api.get(`/webhook-deliveries?automationId=${automation.id}`), 'list deliveries');
        return page.data.some((d: any) => d.status === 'delivered') && page.data;
      },
      30_000,
      'a delivered webhook',
    );
    const delivered = deliveries.find((d: any) => d.status === 'delivered');
    ok(await api.get(`/webhook-deliveries/${delivered.id}`), 'get delivery');
    ok(await api.get(`/webhook-deliveries/${delivered.id}/attempts`), 'attempt log');
    ok(await api.post(`/webhook-deliveries/${delivered.id}/redeliver`), 'redeliver');
    ok(await api.post(`/webhook-endpoints/${endpoint.id}/recover`, { since: new Date(Date.now() - 3600_000).toISOString() }), 'recover');

    // Removals last.
    ok(await api.delete(`/automations/${automation.id}`), 'archive automation');
    ok(await api.delete(`/webhook-endpoints/${endpoint.id}`), 'delete endpoint');

    // The control: a request the document forbids is reported, so a silent proxy cannot pass the tour.
    const control = await client(proxyUrl, tenant.key).post('/venues', { name: 'X', timezone: 'UTC', countryCode: 'GB', unknownKey: 1 });
    expect(control.status).toBe(400);
    expect(control.headers.get('sl-violations')).toContain('additionalProperties');

    const missed = [...operations.keys()].filter((op) => !visited.has(op) && !openEnded.has(op));
    expect(missed, 'operations the tour did not call').toEqual([]);
    expect(violations).toEqual([]);
  }, 180_000);
});
