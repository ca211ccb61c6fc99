import { createRequire } from 'node:module';
import path from 'node:path';
import express, { type Express, type Request, type Response } from 'express';
import type { Config } from '../config.js';
import { getRedis } from '../redis.js';
import { mountAdminBoard } from './admin-board.js';
import { answerHealth, answerMetrics } from '../monitoring/metrics-server.js';
import { EventStreams } from '../services/events/event-stream.js';
import { SigningSecretBox } from '../services/webhooks/signing-secrets.js';
import { createApiDispatcher } from './api-dispatcher.js';
import { apiBasePath, type AnyRoute } from './define-route.js';
import { createFallbackHandlers } from './error-handler.js';
import { observeRequest } from './observe-requests.js';
import { createRequestGuards } from './request-guards.js';
import { adminBoardPolicy, docsPolicy, pageHeaders } from './page-headers.js';
import { assignRequestId } from './request-id.js';

const require = createRequire(import.meta.url);

/** Names the route of the requests under a mount point (Bull Board, the documentation assets) for the metrics. */
const labelRoute = (pattern: string) => (req: Request, _res: Response, next: () => void) => {
  req.routePattern = pattern;
  next();
};

export interface AppOptions {
  routes: AnyRoute[];
  /** The process's configuration (src/config.ts parseConfig): proxies believed, who may scrape, Bull Board's login. */
  config: Config;
  /** The live event streams the app serves (the web role ends them when it stops); new ones by default. */
  eventStreams?: EventStreams;
  adminBoard?: boolean;
}

export function createApp({ routes, config, eventStreams = new EventStreams(config), adminBoard = true }: AppOptions): Express {
  // Connect to Redis now: the rate limiter fails open while its connection is not ready.
  getRedis();
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('trust proxy', config.TRUST_PROXY);
  // Scrapes are neither logged nor counted: the figures describe the API's traffic.
  app.get('/metrics', (req, res) => void answerMetrics(config, req, res));
  // Every other request gets its id and is observed (log line, metrics); then the API, nearly all of
  // the traffic, is dispatched by its own route table. One middleware: each router layer a request
  // passes costs it a match and a `next` round.
  const guards = createRequestGuards(config);
  const dispatchApi = createApiDispatcher(routes, {
    eventStreams,
    guards,
    signingSecrets: new SigningSecretBox(config.secretsKey),
    cursorKey: config.secretsKey,
    webhookTargets: config,
    deliveryQueue: config,
  });
  app.use((req, res, next) => {
    assignRequestId(req, res);
    observeRequest(req, res, () => dispatchApi(req, res, next));
  });

  const swaggerDir = path.dirname(require.resolve('swagger-ui-dist/package.json'));
  app.get(`${apiBasePath}/docs`, pageHeaders(docsPolicy), (req, res) => {
    req.routePattern = `${apiBasePath}/docs`;
    res.type('html').send(docsPage);
  });
  // The page's start-up script is served, not inline: the policy runs no inline script.
  app.get(`${apiBasePath}/docs/start.js`, pageHeaders(docsPolicy), (req, res) => {
    req.routePattern = `${apiBasePath}/docs/start.js`;
    res.type('text/javascript').send(docsStartScript);
  });
  app.use(
    `${apiBasePath}/docs/assets`,
    labelRoute(`${apiBasePath}/docs/assets`),
    pageHeaders(docsPolicy),
    express.static(swaggerDir, { index: false }),
  );

  app.get('/healthz', (req, res) => {
    req.routePattern = '/healthz';
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (req, res) => {
    req.routePattern = '/readyz';
    // Listening is serving here; a stopping process fails readiness first (docs/operations.md "Stopping without resets").
    await answerHealth(res, ['starting', 'serving']);
  });

  if (adminBoard) {
    app.use('/admin/queues', labelRoute('/admin/queues'), pageHeaders(adminBoardPolicy));
    mountAdminBoard(app, config, guards.failedAuth);
  }

  const { notFoundHandler, errorHandler } = createFallbackHandlers(guards);
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
<script src="/api/v1/docs/start.js"></script>
</body>
</html>`;

const docsStartScript = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#ui', deepLinking: true, displayOperationId: true, defaultModelsExpandDepth: 0 });\n`;
