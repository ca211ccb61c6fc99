import { describe, expect, it, vi } from 'vitest';

// No METRICS_TOKEN (NODE_ENV is test, not development), the metrics port on loopback.
vi.hoisted(() => {
  delete process.env.METRICS_TOKEN;
  process.env.METRICS_HOST = '127.0.0.1';
});

import { startMetricsServer } from '../../src/metrics/metrics-server.js';
import { client, createTenant, useTestServer } from '../support/harness.js';

const server = useTestServer();

describe('idempotency hashing of deep bodies (docs/security.md "Limits")', () => {
  it('a 100,000-deep body with an Idempotency-Key is a 400 naming the body, not a 500', async () => {
    const t = await createTenant();
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const api = client(server.url, t.key);
    for (const headers of [{ 'idempotency-key': 'deep-1' }, {}] as Array<Record<string, string>>) {
      const res = await api.request('POST', '/venues', { rawBody: deep, headers: { 'content-type': 'application/json', ...headers } });
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields).toEqual(['body']);
    }
    // A body of ordinary depth is still remembered under its key.
    const venue = { name: 'Deep end', timezone: 'Europe/Rome', countryCode: 'IT' };
    const first = await api.post('/venues', venue, { 'idempotency-key': 'deep-2' });
    const again = await api.post('/venues', venue, { 'idempotency-key': 'deep-2' });
    expect([first.status, again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 201, 'true']);
  });
});

describe('metrics closed by default outside development (docs/security.md "Metrics")', () => {
  it('without METRICS_TOKEN, /metrics answers 401 on the API port and on the metrics port; /healthz stays open', async () => {
    const api = await fetch(`${server.url}/metrics`);
    expect(api.status).toBe(401);
    expect(await api.text()).toContain('set METRICS_TOKEN');
    const metrics = await startMetricsServer(0);
    try {
      // It says where it listens, truthfully: METRICS_HOST here.
      expect(metrics.url).toBe(`http://127.0.0.1:${metrics.port}`);
      expect((await fetch(`${metrics.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${metrics.url}/healthz`)).status).toBe(200);
    } finally {
      await metrics.close();
    }
  });
});
