import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { afterAll, describe, expect, it } from 'vitest';

import { and, eq, like } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { guests } from '../../src/db/schema/index.js';
import { createTenant } from '../support/harness.js';
import { freePorts } from '../support/free-port.js';
import { useWebhookPipeline } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { compiledEntry } from '../support/entry-process.js';

// Its own queues: the events of this file's writes are taken by this file's worker only.
useOwnQueuePrefix('nores');

// The API server of the pipeline is not used: the traffic goes to two web processes of their own.
useWebhookPipeline({ webhooksRole: false });

/** What the stopping process waits with /readyz at 503 before it stops accepting (the production default). */
const readinessDelayMs = 5000;
/**
 * How often the test's balancer checks /readyz. One good check brings a process back; it is taken out
 * by a `stopping` answer at once, or by two failed checks in a row (as load balancers count: a
 * process starved of CPU by a second suite beside answered one check late, and the other was
 * stopping, which left no process in rotation).
 */
const checkEveryMs = 100;

const children: ChildProcess[] = [];
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

interface WebProcess {
  port: number;
  metricsPort: number;
  child: ChildProcess;
  exited: Promise<[number | null, string | null]>;
  output: () => string;
}

async function spawnWeb(): Promise<WebProcess> {
  const [port, metricsPort] = await freePorts(2);
  const child = spawn(process.execPath, [compiledEntry('src/main.ts'), '--role', 'web'], {
    env: {
      ...process.env,
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'info',
      SHUTDOWN_READINESS_DELAY_MS: String(readinessDelayMs),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = once(child, 'exit') as Promise<[number | null, string | null]>;
  return { port, metricsPort, child, exited, output: () => output };
}

type Outcome = { port: number; at: number } & ({ kind: 'answered'; status: number; body: string } | { kind: 'failed'; error: string });

/** One request on a new connection (what a balancer opens for a new client), its body read to the end. */
function send(port: number, key: string, method: string, path: string, body?: unknown): Promise<Outcome> {
  return new Promise((resolve) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method,
        path,
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ port, at: Date.now(), kind: 'answered', status: res.statusCode ?? 0, body: text }));
        res.on('error', (err) => resolve({ port, at: Date.now(), kind: 'failed', error: err.message }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      resolve({ port, at: Date.now(), kind: 'failed', error: `${err.code}: ${err.message}` }),
    );
    req.end(payload);
  });
}

async function readyz(port: number): Promise<{ status: number; body: unknown } | null> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`);
    return { status: res.status, body: await res.json() };
  } catch {
    return null;
  }
}

describe('stopping a web process behind a load balancer (docs/operations.md "Stopping without resets")', () => {
  it('fails readiness first while serving, then drains: new connections throughout the stop see 0 resets and 0 lost requests', async () => {
    // The clients' pace depends on the machine: a quiet one sends more than the default 600 a minute, and a 429 is no answer to count.
    const tenant = await createTenant({ key: { rateLimitPerMinute: 1_000_000 } });
    const [first, second] = await Promise.all([spawnWeb(), spawnWeb()]);
    for (const web of [first, second]) {
      await eventually(
        async () => (await readyz(web.port))?.status === 200 && (await readyz(web.metricsPort))?.status === 200,
        60_000,
        `web on ${web.port} to be ready`,
      );
    }

    // The balancer: sends each new connection to the next process whose last /readyz check was 200.
    const inRotation = new Set([first.port, second.port]);
    const notReadySeen = new Map<number, unknown>();
    const failedChecks = new Map<number, number>();
    let balancing = true;
    const checker = (async () => {
      while (balancing) {
        await Promise.all(
          [first.port, second.port].map(async (port) => {
            const check = await readyz(port);
            if (check?.status === 200) {
              failedChecks.set(port, 0);
              return void inRotation.add(port);
            }
            const failed = (failedChecks.get(port) ?? 0) + 1;
            failedChecks.set(port, failed);
            const stopping = (check?.body as { status?: string } | undefined)?.status === 'stopping';
            if (stopping || failed >= 2) inRotation.delete(port);
            if (check && !notReadySeen.has(port)) notReadySeen.set(port, check.body);
          }),
        );
        await new Promise((resolve) => setTimeout(resolve, checkEveryMs));
      }
    })();
    let turn = 0;
    const pick = () => {
      const ports = [...inRotation];
      return ports[turn++ % ports.length];
    };

    // Eight clients, each request on a new connection, reads and writes alternating, until told to stop.
    const outcomes: Outcome[] = [];
    let sending = true;
    const written: string[] = [];
    const runClient = async (i: number) => {
      for (let n = 0; sending; n++) {
        const port = pick();
        if (port === undefined) {
          outcomes.push({ port: 0, at: Date.now(), kind: 'failed', error: 'no process in rotation' });
          break;
        }
        if (n % 2 === 0) {
          outcomes.push(await send(port, tenant.key, 'GET', '/api/v1/me'));
        } else {
          const lastName = `Stop ${i}-${n}`;
          const outcome = await send(port, tenant.key, 'POST', '/api/v1/guests', {
            venueId: tenant.venueId,
            firstName: 'NoReset',
            lastName,
            phone: `+3906${i}${String(n).padStart(7, '0')}`,
          });
          outcomes.push(outcome);
          if (outcome.kind === 'answered' && outcome.status === 201) written.push(lastName);
        }
      }
    };
    const clients = Array.from({ length: 8 }, (_, i) => runClient(i));
    await eventually(async () => outcomes.length >= 50, 30_000, 'traffic');

    const signalledAt = Date.now();
    first.child.kill('SIGTERM');
    // The stopping process answers readiness with 503 on its port and on its metrics port while it still serves.
    await eventually(async () => (await readyz(first.metricsPort))?.status === 503, 10_000, 'the metrics port to fail readiness');
    const metricsReadyz = await readyz(first.metricsPort);
    // Readiness has failed, and the process still serves a new connection (a balancer that has not
    // noticed yet sends it one): asked directly rather than through the test's balancer, whose own
    // checks may take the process out before any client happens to pick it.
    const whileStopping = await send(first.port, tenant.key, 'GET', '/api/v1/me');
    const [code] = await first.exited;
    const exitedAt = Date.now();
    // Traffic goes on on the other process for a while after the stop.
    const afterExit = outcomes.length;
    await eventually(async () => outcomes.length >= afterExit + 50, 30_000, 'traffic after the stop');
    sending = false;
    await Promise.all(clients);
    balancing = false;
    await checker;
    second.child.kill('SIGTERM');
    await second.exited;

    const failed = outcomes.filter((o) => o.kind === 'failed');
    expect(failed, first.output()).toEqual([]);
    expect(outcomes.filter((o) => o.kind === 'answered' && o.status >= 300)).toEqual([]);
    expect(code, first.output()).toBe(0);
    expect(notReadySeen.get(first.port)).toEqual({ status: 'stopping' });
    expect(metricsReadyz).toEqual({ status: 503, body: { status: 'stopping' } });
    // It kept serving after the signal, and stopped accepting only after the delay.
    expect(whileStopping).toMatchObject({ kind: 'answered', status: 200 });
    expect(exitedAt - signalledAt).toBeGreaterThanOrEqual(readinessDelayMs);
    expect(first.output()).toContain('still serving until load balancers have noticed');
    // Every write answered 201 is stored; none is missing.
    const stored = await db()
      .select({ lastName: guests.lastName })
      .from(guests)
      .where(and(eq(guests.organisationId, tenant.organisationId), like(guests.lastName, 'Stop %')));
    expect(stored.map((g) => g.lastName).sort()).toEqual([...written].sort());
  }, 180_000);
});
