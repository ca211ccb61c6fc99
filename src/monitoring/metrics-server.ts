import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from '../config.js';
import { listeningUrl } from '../lib/listening-url.js';
import { safeEqual } from '../lib/safe-equal.js';
import { logger } from '../logger.js';
import { processState, type ProcessState } from '../core/process-state.js';
import { checkDependencies } from './health.js';
import { scrapeMetrics } from './scrape-time-gauges.js';

/** Who may scrape, and where the metrics port listens. */
export type MetricsAccess = Pick<Config, 'METRICS_TOKEN' | 'METRICS_HOST' | 'NODE_ENV'>;

/**
 * GET /metrics in the Prometheus text format, behind `Authorization: Bearer $METRICS_TOKEN`. Without a
 * token it is open only in development: elsewhere it stays closed until an operator sets one
 * (docs/security.md "Metrics").
 */
export async function answerMetrics(config: MetricsAccess, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const token = config.METRICS_TOKEN;
  const open = !token && config.NODE_ENV === 'development';
  if (!open && !(token && safeEqual(req.headers.authorization ?? '', `Bearer ${token}`))) {
    const why = token
      ? 'Authentication required\n'
      : 'Metrics are closed: set METRICS_TOKEN and scrape with Authorization: Bearer <token>\n';
    res.writeHead(401, { 'WWW-Authenticate': 'Bearer realm="metrics"', 'Content-Type': 'text/plain' }).end(why);
    return;
  }
  try {
    const { contentType, body } = await scrapeMetrics((req.headers.accept ?? '').includes('application/openmetrics-text'));
    res.writeHead(200, { 'Content-Type': contentType }).end(body);
  } catch (err) {
    logger.error({ err }, 'metrics collection failed');
    res.writeHead(500, { 'Content-Type': 'text/plain' }).end('metrics collection failed\n');
  }
}

/**
 * Health of a process: it is in one of `states` (it serves: src/core/process-state.ts) and its
 * PostgreSQL and Redis connections work. 503 otherwise, the body saying which part failed
 * (`{status: "starting" | "stopping"}`, or the connection that is unreachable or, for PostgreSQL, read-only).
 */
export async function answerHealth(res: ServerResponse, states: readonly ProcessState[]): Promise<void> {
  const state = processState();
  const json = { 'Content-Type': 'application/json' };
  // At once, without looking at the connections: a balancer must see a stopping process soon.
  if (!states.includes(state)) return void res.writeHead(503, json).end(JSON.stringify({ status: state }));
  const deps = await checkDependencies();
  const ok = deps.database === 'ok' && deps.redis;
  res.writeHead(ok ? 200 : 503, json).end(
    JSON.stringify({
      status: ok ? 'ok' : 'unavailable',
      database: deps.database,
      redis: deps.redis ? 'ok' : 'unreachable',
    }),
  );
}

export interface MetricsServer {
  port: number;
  /** Where it really listens (METRICS_HOST, else every interface). */
  url: string;
  close: () => Promise<void>;
}

/** The metrics port of a process (docs/operations.md "Metrics and health"): GET /metrics, /healthz and /readyz, nothing else. */
export async function startMetricsServer(config: MetricsAccess, port: number): Promise<MetricsServer> {
  const server: Server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    } else if (path === '/metrics') {
      void answerMetrics(config, req, res);
    } else if (path === '/healthz') {
      // Alive once its roles have started, and while it drains.
      void answerHealth(res, ['serving', 'stopping']);
    } else if (path === '/readyz') {
      void answerHealth(res, ['serving']);
    } else {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('Not found: this port serves /metrics, /healthz and /readyz\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'EADDRINUSE'
          ? new Error(`METRICS_PORT ${port} is already in use: set METRICS_PORT to a free port, or 0 for none`)
          : err,
      ),
    );
    server.listen(port, config.METRICS_HOST, () => resolve());
  });
  server.keepAliveTimeout = 65_000;
  return {
    port: (server.address() as AddressInfo).port,
    url: listeningUrl(server.address() as AddressInfo),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
