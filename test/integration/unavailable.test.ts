import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../support/harness.js';

let child: ChildProcess;
const port = 20000 + Math.floor(Math.random() * 20000);
const url = `http://127.0.0.1:${port}`;

beforeAll(async () => {
  // Port 9 (discard) refuses connections: PostgreSQL is unreachable for this process.
  child = spawn(process.execPath, ['--import', 'tsx', 'test/support/serve-app.ts'], {
    env: { ...process.env, PORT: String(port), DATABASE_URL: 'postgres://postgres@127.0.0.1:9/none' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await once(child.stdout!, 'data');
});
afterAll(() => {
  child.kill('SIGKILL');
});

describe('when PostgreSQL cannot be reached', () => {
  it('an authenticated request answers 503 unavailable with Retry-After, never a 500', async () => {
    const res = await client(url, `gsk_${'a'.repeat(43)}`).get('/me');
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.body.error.code).toBe('unavailable');
    expect(res.body.error.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('/readyz says so and /healthz still answers', async () => {
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ database: 'unreachable', redis: 'ok' });
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });
});
