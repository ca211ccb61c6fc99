import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/lib/api-key-format.js';
import { createApiKey } from '../../src/services/keys/key-service.js';
import { createTenant } from '../support/harness.js';
import { collectLogLines } from '../support/log-lines.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';
import { eventually } from '../support/eventually.js';

// The API in its own process behind "one proxy" (TRUST_PROXY=true), with 5 failed authentications
// allowed per address and minute, Bull Board read-only, its request lines collected.
let app: ServeAppProcess;
let lines: Array<Record<string, unknown>>;

beforeAll(async () => {
  app = await spawnServeApp({ TRUST_PROXY: 'true', AUTH_FAILURES_PER_MINUTE: '5', LOG_LEVEL: 'info', ADMIN_READ_ONLY: 'true' });
  lines = collectLogLines(app.child.stdout!);
  await eventually(async () => (await fetch(`${app.url}/healthz`).catch(() => null))?.ok === true, 10_000, 'the app');
});
afterAll(() => app?.kill());

const origin = 'https://shop.example';

/** Statuses of `count` widget requests, the i-th with the X-Forwarded-For `forwardedFor(i)`. */
async function widgetStatuses(key: string, venueId: string, count: number, forwardedFor: (i: number) => string): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) {
    const res = await fetch(`${app.url}/api/v1/availability/days?venueId=${venueId}&from=2030-01-01&to=2030-01-02&partySize=2`, {
      headers: { authorization: `Bearer ${key}`, origin, 'x-forwarded-for': forwardedFor(i) },
    });
    statuses.push(res.status);
  }
  return statuses;
}

describe('client address (docs/security.md "Client address")', () => {
  it('TRUST_PROXY=true trusts one hop: addresses the client writes to the left of the proxy’s do not escape the per-IP widget limit', async () => {
    const t = await createTenant();
    const limited = (name: string) =>
      createApiKey({ organisationId: t.organisationId, kind: 'publishable', name, allowedOrigins: [origin], rateLimitPerMinute: 5 });
    // The proxy appends the address it saw (198.51.100.7); the client wrote the rest.
    const spoofed = await widgetStatuses((await limited('w1')).key, t.venueId, 8, (i) => `203.0.113.${i}, 198.51.100.7`);
    expect(spoofed.filter((s) => s === 429)).toHaveLength(3);
    const behindLoopback = await widgetStatuses((await limited('w2')).key, t.venueId, 8, (i) => `198.51.100.${i}, 127.0.0.1`);
    expect(behindLoopback.filter((s) => s === 429)).toHaveLength(3);
    // Clients the proxy tells apart keep limits of their own.
    const distinct = await widgetStatuses((await limited('w3')).key, t.venueId, 6, (i) => `192.0.2.${i}`);
    expect(distinct.filter((s) => s === 429)).toHaveLength(0);
  });

  it('failed authentications are throttled per client address (429 before any key lookup), other addresses unaffected', async () => {
    const attempt = (address: string) =>
      fetch(`${app.url}/api/v1/me`, { headers: { authorization: `Bearer ${generateKey('gsk_')}`, 'x-forwarded-for': address } });
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push((await attempt('192.0.2.200')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    const throttled = await attempt('192.0.2.200');
    expect(Number(throttled.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await attempt('192.0.2.201')).status).toBe(401);
  });

  it('the request line names the key’s id and the client address, never the key', async () => {
    const t = await createTenant();
    const res = await fetch(`${app.url}/api/v1/me`, {
      headers: { authorization: `Bearer ${t.key}`, 'x-forwarded-for': '192.0.2.77', 'x-request-id': 'sec-log-1' },
    });
    expect(res.status).toBe(200);
    await eventually(async () => lines.some((l) => l.requestId === 'sec-log-1'), 5000, 'the request line');
    const line = lines.find((l) => l.requestId === 'sec-log-1')!;
    expect(line).toMatchObject({ msg: 'request', keyId: t.keyId, ip: '192.0.2.77', status: 200 });
    expect(JSON.stringify(lines)).not.toContain(t.key);
  });
});

describe('Bull Board (docs/security.md "Bull Board")', () => {
  const board = (address: string, password: string, method = 'GET', path = '/admin/queues/api/queues') =>
    fetch(`${app.url}${path}`, {
      method,
      headers: { authorization: `Basic ${Buffer.from(`admin:${password}`).toString('base64')}`, 'x-forwarded-for': address },
    });

  it('wrong passwords are throttled per client address; the right one from elsewhere still works', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await board('192.0.2.210', `guess-${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    expect((await board('192.0.2.210', process.env.ADMIN_PASSWORD!)).status).toBe(429);
    expect((await board('192.0.2.211', process.env.ADMIN_PASSWORD!)).status).toBe(200);
  });

  it('ADMIN_READ_ONLY refuses every change (retries, removals) and still shows the queues', async () => {
    expect(
      (await board('192.0.2.212', process.env.ADMIN_PASSWORD!, 'PUT', '/admin/queues/api/queues/webhook-delivery/retry/failed')).status,
    ).toBe(403);
    expect(
      (await board('192.0.2.212', process.env.ADMIN_PASSWORD!, 'DELETE', '/admin/queues/api/queues/webhook-delivery/clean/failed')).status,
    ).toBe(403);
    expect((await board('192.0.2.212', process.env.ADMIN_PASSWORD!)).status).toBe(200);
  });
});

describe('security headers on the HTML pages (docs/security.md "Pages")', () => {
  it.each(['/api/v1/docs', '/api/v1/docs/start.js', '/admin/queues'])(
    '%s: nosniff, never framed, a Content-Security-Policy without inline scripts',
    async (path) => {
      const res = await fetch(`${app.url}${path}`, {
        headers: {
          authorization: `Basic ${Buffer.from(`admin:${process.env.ADMIN_PASSWORD}`).toString('base64')}`,
          'x-forwarded-for': '192.0.2.213',
        },
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      const policy = res.headers.get('content-security-policy')!;
      expect(policy).toMatch(/script-src 'self';/);
      expect(policy).toContain("frame-ancestors 'none'");
      if (path === '/api/v1/docs') expect(await res.text()).not.toMatch(/<script>/);
    },
  );
});
