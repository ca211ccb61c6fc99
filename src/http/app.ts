import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { config } from '../config.js';
import { accessLogger } from '../logger.js';
import { getRedis } from '../redis.js';
import { checkDependencies } from '../services/health.js';
import { mountAdminBoard } from './admin-board.js';
import { answerPreflight } from './cors.js';
import { answerMetrics } from '../metrics/metrics-server.js';
import { observeHttpRequest, unmatchedRoute } from '../metrics/metrics.js';
import { apiBasePath, toHandler, type AnyRoute } from './define-route.js';
import { errorHandler, notFoundHandler } from './error-handler.js';
import { requestId } from './request-id.js';

const require = createRequire(import.meta.url);

/** One log line and one http_request_duration_seconds observation per request, when its response is written. */
function observeRequests(req: Request, res: Response, next: () => void): void {
  const started = process.hrtime.bigint();
  res.on('finish', () => {
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    observeHttpRequest(req.method, req.routePattern ?? unmatchedRoute, res.statusCode, ms / 1000);
    // originalUrl: inside a sub-router req.path is relative to it.
    const path = req.originalUrl.split('?', 1)[0];
    accessLogger.info({ requestId: req.requestId, method: req.method, path, status: res.statusCode, ms: Math.round(ms * 100) / 100 }, 'request');
  });
  next();
}

/** Names the route of the requests under a mount point (Bull Board, the documentation assets) for the metrics. */
const labelRoute = (pattern: string) => (req: Request, _res: Response, next: () => void) => {
  req.routePattern = pattern;
  next();
};

/**
 * Routes are grouped in one router per first path segment, and a request goes straight to its
 * segment's router by a map lookup: it tests only the patterns of its own resource, and no chain of
 * mount points (each costs a pattern test and a URL rewrite per request). The routers hold the
 * routes' full paths (/api/v1/…).
 */
function createApiDispatcher(routes: AnyRoute[]): { dispatch: RequestHandler; segmentRouter: (segment: string) => express.Router } {
  const byPath = new Map<string, AnyRoute[]>();
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route]);
  const routers = new Map<string, express.Router>();
  const routerOf = (segment: string) => {
    let router = routers.get(segment);
    if (!router) {
      router = express.Router({ caseSensitive: true });
      routers.set(segment, router);
    }
    return router;
  };
  for (const [routePath, defs] of byPath) {
    const pattern = `${apiBasePath}${routePath}`;
    const chain = routerOf(routePath.split('/')[1]).route(pattern);
    const methods = defs.map((d) => d.method.toUpperCase());
    const allow = [...methods, ...(methods.includes('GET') ? ['HEAD'] : [])].join(', ');
    if (defs.some((d) => d.widget)) {
      chain.options((req, res) => {
        req.routePattern = pattern;
        answerPreflight(req, res, methods);
      });
    }
    for (const def of defs) chain[def.method](toHandler(def));
    chain.all((req, res) => {
      req.routePattern = pattern;
      res.setHeader('Allow', allow);
      res.status(405).end();
    });
  }
  const prefix = `${apiBasePath}/`;
  // Mounted at the root, not at apiBasePath: req.url stays as it came, so no router rewrites it and
  // parses it again. "/api/v1/venues/…?…" → "venues".
  const dispatch: RequestHandler = (req, res, next) => {
    if (!req.url.startsWith(prefix)) return next();
    const rest = req.url.slice(prefix.length);
    const end = rest.search(/[/?]/);
    const router = routers.get(end === -1 ? rest : rest.slice(0, end));
    if (router) router(req, res, next);
    else next();
  };
  return { dispatch, segmentRouter: routerOf };
}

export interface AppOptions {
  routes: AnyRoute[];
  adminBoard?: boolean;
}

export function createApp({ routes, adminBoard = true }: AppOptions): Express {
  // Connect to Redis now: the rate limiter fails open while its connection is not ready.
  getRedis();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.TRUST_PROXY);
  // Scrapes are neither logged nor counted: the figures describe the API's traffic.
  app.get('/metrics', answerMetrics);
  app.use(requestId);
  app.use(observeRequests);

  const api = createApiDispatcher(routes);
  const docs = api.segmentRouter('docs');
  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  docs.get(`${apiBasePath}/docs`, (req, res) => {
    req.routePattern = `${apiBasePath}/docs`;
    res.type('html').send(docsPage);
  });
  docs.use(`${apiBasePath}/docs/assets`, labelRoute(`${apiBasePath}/docs/assets`), express.static(swaggerDir, { index: false }));
  // First: the API is nearly all of the traffic, and every layer before it costs each request a test.
  app.use(api.dispatch);

  app.get('/healthz', (req, res) => {
    req.routePattern = '/healthz';
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (req, res) => {
    req.routePattern = '/readyz';
    const deps = await checkDependencies();
    const ready = deps.database && deps.redis;
    res.status(ready ? 200 : 503).json({ status: ready ? 'ok' : 'unavailable', database: deps.database ? 'ok' : 'unreachable', redis: deps.redis ? 'ok' : 'unreachable' });
  });

  if (adminBoard) {
    app.use('/admin/queues', labelRoute('/admin/queues'));
    mountAdminBoard(app);
  }

  app.use(notFoundHandler);
  app.use(errorHandler);
  return app;
}

const docsPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>API reference</title>
<link rel="stylesheet" href="/api/v1/docs/assets/swagger-ui.css">
</head>
<body>
<div id="ui"></div>
<script src="/api/v1/docs/assets/swagger-ui-bundle.js"></script>
<script>window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#ui', deepLinking: true, displayOperationId: true, defaultModelsExpandDepth: 0 });</script>
</body>
</html>`;
