import { Gauge, Registry, type Metric, type OpenMetricsContentType } from 'prom-client';
import { pool } from '../db/client.js';
import { endpointHealthStates } from '../db/schema/index.js';
import { readReplica } from '../db/read-replica.js';
import { allQueueNames } from '../jobs/all-jobs.js';
import { withTimeout } from '../lib/with-timeout.js';
import { metricsRegistry } from '../metrics/counters.js';
import { getQueue } from '../queues/queues.js';

// The figures read when scraped rather than observed: queue depths and the outbox age come from Redis
// and PostgreSQL, so they are the same from every process (aggregate them with max(), not sum()).
// They read queues and tables, which the counters' module (imported low, by queues and services) must not;
// a figure that cannot be read in time is left out of the scrape.

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

let openMetrics: Registry<OpenMetricsContentType> | undefined;

/**
 * The same metrics in the OpenMetrics format, for a scrape that asks for it (`Accept:
 * application/openmetrics-text`): the only format with exemplars, the trace ids of observations
 * made while tracing is on (docs/operations.md "Tracing"). Built at the first such scrape.
 */
function openMetricsRegistry(): Registry<OpenMetricsContentType> {
  if (!openMetrics) {
    openMetrics = new Registry<OpenMetricsContentType>();
    openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    // getMetricsAsArray gives the registered metrics themselves (its typing calls them MetricObject).
    for (const metric of metricsRegistry.getMetricsAsArray()) openMetrics.registerMetric(metric as unknown as Metric);
  }
  return openMetrics;
}

/** The text of a scrape of this process's metrics, in the OpenMetrics format when `asOpenMetrics` (the one with exemplars). */
export async function scrapeMetrics(asOpenMetrics: boolean): Promise<{ contentType: string; body: string }> {
  const registry = asOpenMetrics ? openMetricsRegistry() : metricsRegistry;
  return { contentType: registry.contentType, body: await registry.metrics() };
}
