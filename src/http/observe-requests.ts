import { subscribe } from 'node:diagnostics_channel';
import type { Request, Response } from 'express';
import { writeRequestLine } from '../logger.js';
import { observeHttpRequest, unmatchedRoute } from '../metrics/counters.js';
import { enterSpan, isTracing } from '../tracing/tracing.js';

const startedAt = Symbol('startedAt');
type ObservedRequest = Request & { [startedAt]?: number };

/**
 * Marks a request as one of the app's, to be logged and counted when its response is written, and
 * runs `handle` (the rest of its handling). While tracing is on, `handle` runs in the request's
 * server span: a child of the caller's span when the request carries a W3C `traceparent`, else the
 * root of a trace. The span is named after the route's template once it is known, and ends when the
 * response is closed (written, or its client gone).
 */
export function observeRequest(req: ObservedRequest, res: Response, handle: () => void): void {
  req[startedAt] = performance.now();
  if (!isTracing()) return handle();
  const traceparent = req.headers.traceparent;
  const tracestate = req.headers.tracestate;
  const parent = typeof traceparent === 'string' ? { traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) } : null;
  enterSpan(req.method, { kind: 'server', parent, attributes: { 'http.request.method': req.method } }, (span) => {
    res.once('close', () => {
      const route = req.routePattern ?? unmatchedRoute;
      span.setName(`${req.method} ${route}`);
      span.setAttributes({ 'http.route': route, 'http.response.status_code': res.statusCode, 'floorline.request_id': req.requestId });
      if (res.statusCode >= 500) span.fail(`HTTP ${res.statusCode}`);
      span.end();
    });
    handle();
  });
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
