import { DelayedError, RateLimitError, WaitingChildrenError } from 'bullmq';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { activeTraceIds } from '../tracing/tracing.js';

/**
 * The Prometheus metrics of this process (docs/operations.md "Metrics and health"), one registry whatever
 * roles it runs: the counters and histograms the code observes into, here; the gauges read from Redis and
 * PostgreSQL when scraped join it from src/monitoring/scrape-time-gauges.ts, which the metrics port loads.
 */
export const metricsRegistry = new Registry();

/**
 * How often the event loop's delay is sampled for `nodejs_eventloop_lag_*`, in ms. prom-client's
 * default of 10 ms wakes an idle process 100 times a second, which was nearly all of an idle
 * worker's CPU and a tenth of what a webhook delivered alone cost the workers (docs/benchmarks.md
 * "The event-loop monitor's wake-ups"); every 100 ms still sees each stall of 100 ms or more.
 */
const eventLoopSamplingMs = 100;

let collectingProcessMetrics = false;

/**
 * Starts prom-client's default process metrics (CPU, memory, heap, event-loop lag, GC, handles) in
 * this registry: once per process, by the entry point (src/roles/start-process.ts), since sampling
 * the event loop keeps a timer running.
 */
export function collectProcessMetrics(): void {
  if (collectingProcessMetrics) return;
  collectingProcessMetrics = true;
  collectDefaultMetrics({ register: metricsRegistry, eventLoopMonitoringPrecision: eventLoopSamplingMs });
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
