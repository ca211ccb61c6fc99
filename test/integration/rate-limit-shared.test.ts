import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client, createTenant, startTestServer, type TestServer } from '../support/harness.js';
import { spawnServeApp, type ServeAppProcess } from '../support/serve-app-process.js';

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
    // Stay inside one minute window so that the count is not reset half-way.
    const secondOfMinute = new Date().getUTCSeconds();
    if (secondOfMinute > 50) await sleep((61 - secondOfMinute) * 1000);
    const statuses: number[] = [];
    for (let i = 0; i < 50; i++) {
      statuses.push((await instances[i % 2].get('/me')).status);
      await sleep(60); // longer than the 50 ms batch interval
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.slice(40).every((s) => s === 429)).toBe(true);
  });
});
