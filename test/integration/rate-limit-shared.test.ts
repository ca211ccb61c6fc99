import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTenant, startTestServer, type TestServer } from '../support/harness.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';
import { eventually } from '../support/eventually.js';
import { getRedis, redisKey } from '../../src/redis.js';

let inProcess: TestServer;
let child: ServeAppProcess;

beforeAll(async () => {
  inProcess = await startTestServer();
  child = await spawnServeApp();
});
afterAll(async () => {
  child.kill();
  await inProcess.close();
});

describe('rate limits shared by instances', () => {
  it('two API processes together admit exactly the limit, batching far from it', async () => {
    const t = await createTenant({ key: { rateLimitPerMinute: 40 } });
    const instances = [client(inProcess.url, t.key), client(child.url, t.key)];
    // Stay inside one minute window so that the count is not reset half-way: wait for a minute with ten
    // seconds or more left (the windows are fixed minutes of the clock).
    await eventually(async () => new Date().getUTCSeconds() <= 50, 15_000, 'a minute window with 10 s left', 250);
    const windowKey = redisKey(['rl', t.keyId], String(Math.floor(Date.now() / 60_000)));
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      statuses.push((await instances[i % 2].get('/me')).status);
      // Far from the limit an instance adds its hits to the shared count in batches (every 50 ms): the
      // next request goes once this one is in it, so each instance answers from the other's hits too.
      await eventually(async () => Number(await getRedis().get(windowKey)) >= i + 1, 5000, `hit ${i + 1} in the shared count`, 10);
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
  });
});
