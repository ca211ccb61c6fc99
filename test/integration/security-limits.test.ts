import { describe, expect, it } from 'vitest';
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
