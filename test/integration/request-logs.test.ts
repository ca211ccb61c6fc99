import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { and, eq, isNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { createTenant, type Tenant } from '../support/harness.js';
import { freePorts } from '../support/free-port.js';
import { collectLogLines } from '../support/log-lines.js';
import { eventually } from '../support/eventually.js';

// The API in its own process, on a Redis of its own that the test stops midway: the rate limiter and
// the outbox then warn while serving a request, and those lines must name the request.
let redis: ChildProcess;
let app: ChildProcess;
let tenant: Tenant | undefined;
let lines: Array<Record<string, unknown>> = [];
// Chosen together: the app's port is not listened on yet when redis-server takes its own.
const [port, redisPort] = await freePorts(2);
const url = `http://127.0.0.1:${port}`;

const accepts = (p: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(p, '127.0.0.1', () => resolve(socket.end() && true));
    socket.on('error', () => resolve(false));
  });

beforeAll(async () => {
  redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await eventually(() => accepts(redisPort), 10_000, 'redis-server');
  app = spawn(process.execPath, ['--import', 'tsx', 'test/support/serve-app.ts'], {
    // Its own queue prefix: no other file's worker takes its jobs.
    env: {
      ...process.env,
      PORT: String(port),
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}logs`,
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  lines = collectLogLines(app.stdout!);
  await once(app.stdout!, 'data');
});
afterAll(async () => {
  app?.kill('SIGKILL');
  redis?.kill('SIGKILL');
  // The events of this file's guests were never processed: they must not wait for another file's outbox sweep.
  if (tenant)
    await db()
      .update(events)
      .set({ dispatchedAt: new Date() })
      .where(and(eq(events.organisationId, tenant.organisationId), isNull(events.dispatchedAt)));
});

describe('request logs', () => {
  it('every line written while serving a request carries its request id, the services’ warnings included', async () => {
    const { key, venueId } = (tenant = await createTenant());
    const createGuest = (requestId: string, phone: string) =>
      fetch(`${url}/api/v1/guests`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ venueId, phone, firstName: 'Ada', lastName: 'Lovelace' }),
      });
    // Redis up: the queue connection is established, nothing to warn about.
    expect((await createGuest('log-test-1', '+39 06 1234 5678')).status).toBe(201);
    const exited = once(redis, 'exit');
    redis.kill('SIGTERM');
    await exited;

    expect((await createGuest('log-test-2', '+39 06 1234 5679')).status).toBe(201);
    const notEnqueued = await eventually(
      async () => lines.find((l) => String(l.msg).startsWith('events not enqueued')),
      10_000,
      'the outbox warning',
    );
    expect(notEnqueued.requestId).toBe('log-test-2');
    await eventually(async () => lines.filter((l) => l.msg === 'request').length === 2, 5000, 'both request lines');
    // Nothing else was served, so every line of the process is about one of these two requests, except
    // the rate limiter's batched flush of hits (many requests' at once, on a timer), which names none.
    const batchedFlush = (l: Record<string, unknown>) => String(l.msg).startsWith('rate limiter unavailable') && l.requestId === undefined;
    for (const line of lines.filter((l) => !batchedFlush(l)))
      expect(['log-test-1', 'log-test-2'], JSON.stringify(line)).toContain(line.requestId);
  });
});
