import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../support/harness.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';

let child: ServeAppProcess;

beforeAll(async () => {
  // Port 9 (discard) refuses connections: PostgreSQL is unreachable for this process.
  child = await spawnServeApp({ DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none' });
});
afterAll(() => {
  child.kill();
});

describe('when PostgreSQL cannot be reached', () => {
  it('an authenticated request answers 503 unavailable with Retry-After, never a 500', async () => {
    const res = await client(child.url, `gsk_${'a'.repeat(43)}`).get('/me');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.error.code).toBe('unavailable');
    expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('/readyz says so and /healthz still answers', async () => {
    const ready = await fetch(`${child.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ database: 'unreachable', redis: 'ok' });
    expect((await fetch(`${child.url}/healthz`)).status).toBe(200);
  });
});
