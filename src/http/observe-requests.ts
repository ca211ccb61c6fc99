import { subscribe } from 'node:diagnostics_channel';
import type { Request, Response } from 'express';
import { writeRequestLine } from '../logger.js';
import { observeHttpRequest, unmatchedRoute } from '../metrics/metrics.js';

const startedAt = Symbol('startedAt');
type ObservedRequest = Request & { [startedAt]?: number };

/** Marks a request as one of the app's, to be logged and counted when its response is written. */
export function observeRequest(req: ObservedRequest): void {
  req[startedAt] = performance.now();
}

// One log line and one http_request_duration_seconds observation per request, when its response is
// written. Node publishes every server's finished responses on this channel: it spares each request a
// 'finish' listener and its closure. Only requests marked by observeRequest are the app's (the
// process may run other servers: the metrics port, a test's webhook receiver).
subscribe('http.server.response.finish', (message) => {
  const { request: req, response: res } = message as { request: ObservedRequest; response: Response };
  const started = req[startedAt];
  if (started === undefined) return;
  const ms = performance.now() - started;
  observeHttpRequest(req.method, req.routePattern ?? unmatchedRoute, res.statusCode, ms / 1000);
  // originalUrl: inside a sub-router req.path is relative to it.
  const path = req.originalUrl.split('?', 1)[0];
  writeRequestLine({
    requestId: req.requestId,
    method: req.method,
    path,
    status: res.statusCode,
    ms: Math.round(ms * 100) / 100,
    keyId: req.auth?.keyId ?? null,
    ip: req.ip,
  });
});
