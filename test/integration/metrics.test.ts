import { describe, expect, it } from 'vitest';

import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { eq, sql } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { collectProcessMetrics } from '../../src/metrics/counters.js';
import { startMetricsServer } from '../../src/monitoring/metrics-server.js';
import { markProcessState } from '../../src/core/process-state.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { importJob } from '../../src/jobs/import-job.js';
import { getQueue } from '../../src/queues/queues.js';
import { client, createTenant, testConfig } from '../support/harness.js';
import { freePort } from '../support/free-port.js';
import { mainThreadWakeUps } from '../support/wake-ups.js';
import { emitReservationEvent, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { compiledEntry } from '../support/entry-process.js';

// Its own queues (their depths are checked exactly).
useOwnQueuePrefix('mx');

// A metrics token, and a compressed retry schedule (five failed attempts in about 2.5 s).
const metricsToken = 'metrics-token-0123456789';
const config = testConfig({ METRICS_TOKEN: metricsToken });
const pipeline = useWebhookPipeline({ config, retry: { backoffScale: 0.0005 } });
const auth = { authorization: `Bearer ${metricsToken}` };

/** The samples of a Prometheus text exposition, keyed `name{label="value",…}` as printed. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

async function scrape(url: string): Promise<Map<string, number>> {
  const res = await fetch(url, { headers: auth });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

/** How much each sample moved between two scrapes (absent before = 0). */
const delta = (before: Map<string, number>, after: Map<string, number>, key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);

describe('metrics (docs/operations.md "Metrics and health")', () => {
  it('count the requests, jobs, deliveries, queue depths and outbox age that really happened', async () => {
    // The roles of this file run in-process (useWebhookPipeline): this process serves, as runRoles would
    // mark it, with the process metrics the entry point starts.
    markProcessState('serving');
    collectProcessMetrics();
    const metrics = await startMetricsServer(config, 0);
    const metricsUrl = `http://127.0.0.1:${metrics.port}/metrics`;
    try {
      // The token is required, and liveness answers without it.
      expect((await fetch(metricsUrl)).status).toBe(401);
      expect((await fetch(metricsUrl, { headers: { authorization: 'Bearer wrong-token-0123456789' } })).status).toBe(401);
      const health = await fetch(`http://127.0.0.1:${metrics.port}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', database: 'ok', redis: 'ok' });

      const ok = await createTenant();
      const failing = await createTenant();
      const okReceiver = await pipeline.startReceiver(() => 200);
      const failingReceiver = await pipeline.startReceiver(() => 500);
      for (const [tenant, receiver] of [
        [ok, okReceiver],
        [failing, failingReceiver],
      ] as const) {
        const api = client(pipeline.url, tenant.key);
        expect((await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: receiver.url })).status).toBe(201);
        const automation = {
          venueId: tenant.venueId,
          name: 'Notify',
          eventTypes: ['reservation_created'],
          action: { type: 'partner_notification' },
        };
        expect((await api.post('/automations', automation)).status).toBe(201);
      }

      const before = await scrape(metricsUrl);

      // HTTP: three reads, a missing venue, an unknown path, a wrong method, liveness.
      const api = client(pipeline.url, ok.key);
      for (let i = 0; i < 3; i++) expect((await api.get(`/venues/${ok.venueId}`)).status).toBe(200);
      expect((await api.get(`/venues/${randomUUID()}`)).status).toBe(404);
      expect((await api.get(`/no-such-resource/${randomUUID()}`)).status).toBe(404);
      expect((await api.request('PUT', `/venues/${ok.venueId}`)).status).toBe(405);
      expect((await fetch(`${pipeline.url}/healthz`)).status).toBe(200);
      // The web role's own port serves the same registry; scraping it is not counted as traffic.
      expect((await fetch(`${pipeline.url}/metrics`)).status).toBe(401);
      expect((await fetch(`${pipeline.url}/metrics`, { headers: auth })).status).toBe(200);

      // Jobs and deliveries: one delivered, one failing five times then discarded.
      const delivered = await emitReservationEvent(ok);
      const discarded = await emitReservationEvent(failing);
      await waitForDelivery(delivered.eventId, (d) => d.status === 'delivered');
      await waitForDelivery(discarded.eventId, (d) => d.status === 'discarded', 30_000);
      expect(failingReceiver.received).toHaveLength(5);
      const deliveryQueue = getQueue(webhookDeliveryJob.queueName);
      await eventually(async () => (await deliveryQueue.getJobCounts('failed')).failed === 1, 5000, 'the discarded job failed');

      // Queue depths: jobs nobody consumes in this process (no imports worker here).
      const imports = getQueue(importJob.queueName);
      for (let i = 0; i < 3; i++) await imports.add('import', { importId: randomUUID() });
      await imports.add('import', { importId: randomUUID() }, { delay: 3600_000 });

      // The outbox: an event committed long ago and never dispatched.
      const [oldEvent] = await db()
        .insert(events)
        .values({
          organisationId: ok.organisationId,
          venueId: ok.venueId,
          livemode: true,
          type: 'reservation_created',
          subjectType: 'none',
          subjectId: null,
          data: {},
          createdAt: sql`now() - interval '3650 days'`,
        })
        .returning({ id: events.id });

      const after = await scrape(metricsUrl);
      await db().delete(events).where(eq(events.id, oldEvent.id));
      await imports.obliterate({ force: true });
      const [eventRow] = await db().select({ createdAt: events.createdAt }).from(events).where(eq(events.id, delivered.eventId));

      const requests = (method: string, route: string, status: number) =>
        delta(before, after, `http_request_duration_seconds_count{method="${method}",route="${route}",status="${status}"}`);
      expect(requests('GET', '/api/v1/venues/:id', 200)).toBe(3);
      expect(requests('GET', '/api/v1/venues/:id', 404)).toBe(1);
      expect(requests('GET', 'unmatched', 404)).toBe(1);
      expect(requests('PUT', '/api/v1/venues/:id', 405)).toBe(1);
      expect(requests('GET', '/healthz', 200)).toBe(1);
      expect([...after.keys()].some((k) => k.includes('route="/metrics"'))).toBe(false);
      expect(
        delta(before, after, 'http_request_duration_seconds_sum{method="GET",route="/api/v1/venues/:id",status="200"}'),
      ).toBeGreaterThan(0);
      expect(
        delta(before, after, 'http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/v1/venues/:id",status="200"}'),
      ).toBe(3);

      expect(delta(before, after, 'job_duration_seconds_count{queue="events",outcome="completed"}')).toBe(2);
      expect(delta(before, after, 'job_duration_seconds_count{queue="webhook-delivery",outcome="completed"}')).toBe(1);
      expect(delta(before, after, 'job_duration_seconds_count{queue="webhook-delivery",outcome="failed"}')).toBe(5);

      expect(delta(before, after, 'webhook_deliveries_total{outcome="delivered"}')).toBe(1);
      expect(delta(before, after, 'webhook_deliveries_total{outcome="failed_attempt"}')).toBe(4);
      expect(delta(before, after, 'webhook_deliveries_total{outcome="discarded"}')).toBe(1);
      expect(delta(before, after, 'webhook_delivery_lag_seconds_count')).toBe(1);
      // The lag runs from the event's commit to the 2xx: at least until the receiver had it, at most until now.
      const lag = delta(before, after, 'webhook_delivery_lag_seconds_sum');
      expect(lag).toBeGreaterThanOrEqual((okReceiver.received[0].receivedAt - eventRow.createdAt.getTime()) / 1000 - 0.01);
      expect(lag).toBeLessThan((Date.now() - eventRow.createdAt.getTime()) / 1000);

      expect(after.get('queue_jobs{queue="imports",state="waiting"}')).toBe(3);
      expect(after.get('queue_jobs{queue="imports",state="delayed"}')).toBe(1);
      expect(after.get('queue_jobs{queue="imports",state="active"}')).toBe(0);
      expect(after.get('queue_jobs{queue="webhook-delivery",state="failed"}')).toBe(1);
      expect(after.get('queue_jobs{queue="events",state="waiting"}')).toBe(0);

      const outboxAge = after.get('outbox_oldest_undispatched_seconds')!;
      expect(outboxAge).toBeGreaterThanOrEqual(3650 * 86400);
      expect(outboxAge).toBeLessThan(3650 * 86400 + 60);

      expect(after.get('process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
    } finally {
      await metrics.close();
    }
  });

  /** worker-webhooks as its own process (the compiled entry point) serving its metrics port, until `use` ends. */
  async function withWorkerProcess(use: (port: number, pid: number) => Promise<void>): Promise<void> {
    const port = await freePort();
    const child = spawn(process.execPath, [compiledEntry('workers/webhooks.ts')], {
      env: { ...process.env, LOG_LEVEL: 'silent', METRICS_PORT: String(port), METRICS_TOKEN: metricsToken },
      stdio: 'ignore',
    });
    try {
      const health = await eventually(
        () =>
          fetch(`http://127.0.0.1:${port}/healthz`).then(
            (r) => (r.ok ? r.json() : undefined),
            () => undefined,
          ),
        60_000,
        'worker-webhooks /healthz',
      );
      expect(health).toEqual({ status: 'ok', database: 'ok', redis: 'ok' });
      await use(port, child.pid!);
    } finally {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }

  it('a worker role run as its own process answers /healthz and /metrics on its metrics port', async () => {
    await withWorkerProcess(async (port) => {
      const samples = await scrape(`http://127.0.0.1:${port}/metrics`);
      expect(samples.get('queue_jobs{queue="webhook-delivery",state="waiting"}')).toBeGreaterThanOrEqual(0);
      expect(samples.has('outbox_oldest_undispatched_seconds')).toBe(true);
      expect(samples.get('process_resident_memory_bytes')).toBeGreaterThan(0);
      expect(samples.has('nodejs_eventloop_lag_p99_seconds')).toBe(true);
      expect((await fetch(`http://127.0.0.1:${port}/anything`)).status).toBe(404);
    });
  }, 90_000);

  // The event loop's delay sampled every 10 ms (prom-client's default) woke an idle process 100 times
  // a second: the main thread's wake-ups over three idle seconds tell.
  it('an idle worker process wakes its main thread fewer than 25 times a second (the event loop sampled every 100 ms)', async () => {
    await withWorkerProcess(async (_port, pid) => {
      // Its start-up's last steps (the first blocking waits for jobs) settle first.
      await sleep(1000);
      const before = mainThreadWakeUps(pid);
      await sleep(3000);
      const perSecond = (mainThreadWakeUps(pid) - before) / 3;
      expect(perSecond).toBeLessThan(25);
    });
  }, 90_000);
});
