import { DelayedError, RateLimitError, WaitingChildrenError } from 'bullmq';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric, type OpenMetricsContentType } from 'prom-client';
import { pool } from '../db/client.js';
import { endpointHealthStates } from '../db/schema/index.js';
import { readReplica } from '../db/read-replica.js';
import { allQueueNames } from '../jobs/all-jobs.js';
import { getQueue } from '../queues/queues.js';
import { activeTraceIds } from '../tracing/tracing.js';

/**
 * The Prometheus metrics of this process (docs/operations.md "Metrics and health"), one registry whatever roles it runs.
 * Queue depths and the outbox age are read from Redis and PostgreSQL when scraped, so they are
 * the same from every process: aggregate them with max(), not sum().
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry });

let openMetrics: Registry<OpenMetricsContentType> | undefined;

/**
 * The same metrics in the OpenMetrics format, for a scrape that asks for it (`Accept:
 * application/openmetrics-text`): the only format with exemplars, the trace ids of observations
 * made while tracing is on (docs/operations.md "Tracing"). Built at the first such scrape.
 */
export function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  if (!openMetrics) {
    openMetrics = new Registry<OpenMetricsContentType>();
    openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    // getMetricsAsArray gives the registered metrics themselves (its typing calls them MetricObject).
    for (const metric of metricsRegistry.getMetricsAsArray()) openMetrics.registerMetric(metric as unknown as Metric);
  }
  return openMetrics;
}

/** The exemplar of an observation: the active trace, while tracing is on. */
function exemplarLabels(): Record<string, string> | undefined {
  const ids = activeTraceIds();
  return ids && { trace_id: ids.trace_id };
}

/** The route label of a request that matched no route (a fixed value: raw URLs would explode the label set). */
export const unmatchedRoute = 'unmatched';

const httpRequestDuration = new Histogram({
  name: 'http_request_duration_seconds',
  help: 'HTTP requests by method, route pattern and status, from arrival to the end of the response',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  // Registered below: prom-client refuses exemplars at construction for a registry of the Prometheus
  // format, whose text leaves them out, and they are read from the OpenMetrics one.
  registers: [],
  enableExemplars: true,
});
metricsRegistry.registerMetric(httpRequestDuration);

const jobDuration = new Histogram({
  name: 'job_duration_seconds',
  help: 'BullMQ jobs processed by this process, by queue and outcome (completed, failed, postponed)',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metricsRegistry],
});

const webhookDeliveries = new Counter({
  name: 'webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome: delivered (2xx), failed_attempt (will be retried), discarded (last attempt failed)',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

const webhookDeliveryLag = new Histogram({
  name: 'webhook_delivery_lag_seconds',
  help: "From the event's commit to the 2xx answer of its webhook, retries included",
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 6 * 3600, 24 * 3600],
  // Registered below: prom-client refuses exemplars at construction for a registry of the Prometheus
  // format, whose text leaves them out, and they are read from the OpenMetrics one.
  registers: [],
  enableExemplars: true,
});
metricsRegistry.registerMetric(webhookDeliveryLag);

/** A scrape must answer even when Redis or PostgreSQL does not: a figure that cannot be read is left out. */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}

const queueStates = ['waiting', 'active', 'delayed', 'failed'] as const;

new Gauge({
  name: 'queue_jobs',
  help: 'Jobs in each BullMQ queue by state (waiting includes prioritized jobs), read from Redis on scrape',
  labelNames: ['queue', 'state'] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    await Promise.all(
      allQueueNames.map(async (queue) => {
        // getJobCounts is one pipelined round trip of O(1) length commands per queue.
        const counts = await withTimeout(getQueue(queue).getJobCounts('wait', 'prioritized', 'active', 'delayed', 'failed'), 1000).catch(
          () => null,
        );
        if (!counts) return;
        const byState = {
          waiting: (counts.wait ?? 0) + (counts.prioritized ?? 0),
          active: counts.active ?? 0,
          delayed: counts.delayed ?? 0,
          failed: counts.failed ?? 0,
        };
        for (const state of queueStates) this.set({ queue, state }, byState[state]);
      }),
    );
  },
});

new Gauge({
  name: 'database_replica_lag_seconds',
  help: 'How far the read replica (DATABASE_READ_URL) is behind the primary, as last measured (every second); -1: it does not answer; absent: no replica',
  registers: [metricsRegistry],
  collect() {
    this.reset();
    if (!readReplica().configured) return;
    this.set(readReplica().lagSeconds() ?? -1);
  },
});

new Gauge({
  name: 'outbox_oldest_undispatched_seconds',
  help: 'Age of the oldest event not yet processed by worker-events (0 when none), read from PostgreSQL on scrape',
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    // The partial index events_undispatched_idx answers this without scanning the history.
    const rows = await withTimeout(
      pool()<
        { age: number | null }[]
      >`select extract(epoch from (now() - min(created_at)))::float8 as age from events where dispatched_at is null`,
      1000,
    ).catch(() => null);
    if (rows) this.set(Math.max(0, rows[0]?.age ?? 0));
  },
});

new Gauge({
  name: 'webhook_endpoints',
  help: 'Webhook destinations by health state (healthy, failing, disabled), counted in PostgreSQL on scrape',
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
  async collect() {
    this.reset();
    const rows = await withTimeout(
      pool()<{ state: string; count: number }[]>`select health_state as state, count(*)::int as count from webhook_endpoints group by 1`,
      1000,
    ).catch(() => null);
    if (!rows) return;
    for (const state of endpointHealthStates) this.set({ state }, rows.find((r) => r.state === state)?.count ?? 0);
  },
});

export function observeHttpRequest(method: string, route: string, status: number, seconds: number): void {
  httpRequestDuration.observe({ labels: { method, route, status }, value: seconds, exemplarLabels: exemplarLabels() as never });
}

/** BullMQ's "move me" errors end a run without failing the job: the job is postponed, not failed. */
export function jobOutcomeOf(err: unknown): 'failed' | 'postponed' {
  return err instanceof DelayedError || err instanceof RateLimitError || err instanceof WaitingChildrenError ? 'postponed' : 'failed';
}

export function observeJob(queue: string, outcome: 'completed' | 'failed' | 'postponed', seconds: number): void {
  jobDuration.observe({ queue, outcome }, seconds);
}

export function countWebhookDelivered(eventCreatedAt: Date | string): void {
  webhookDeliveries.inc({ outcome: 'delivered' });
  webhookDeliveryLag.observe({
    value: Math.max(0, (Date.now() - new Date(eventCreatedAt).getTime()) / 1000),
    exemplarLabels: exemplarLabels() as never,
  });
}

export function countWebhookFailure(discarded: boolean): void {
  webhookDeliveries.inc({ outcome: discarded ? 'discarded' : 'failed_attempt' });
}
