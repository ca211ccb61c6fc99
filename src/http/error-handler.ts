import type { NextFunction, Request, Response } from 'express';
import { isConnectionError, isStatementCancelled } from '../lib/connection-errors.js';
import type { AuthContext } from '../core/auth-context.js';
import { ApiError } from '../core/errors.js';
import type { RequestGuards } from './request-guards.js';
import { logger } from '../logger.js';

export interface RenderedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * A body whose Content-Encoding (gzip, deflate, br) does not decode: body-parser passes the zlib
 * error (errno and code, e.g. Z_DATA_ERROR) on with status 400 and without a `type`.
 */
function isUndecodableBody(err: unknown): boolean {
  const e = err as { status?: unknown; type?: unknown; errno?: unknown; code?: unknown } | null;
  return e?.status === 400 && e.type === undefined && typeof e.errno === 'number' && typeof e.code === 'string';
}

/** Maps anything thrown to an ApiError; unknown errors become the fixed 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const bodyError = err as { type?: string; status?: number };
  if (bodyError?.type === 'entity.too.large') return new ApiError('payload_too_large');
  if (bodyError?.type === 'entity.parse.failed') return ApiError.invalid(['body'], 'The request body is not valid JSON.');
  if (isUndecodableBody(err)) return ApiError.invalid(['body'], 'The request body does not decode with its Content-Encoding.');
  if (bodyError?.type === 'encoding.unsupported' || bodyError?.type === 'charset.unsupported') {
    return ApiError.invalid(['body'], 'The request body encoding is not supported.');
  }
  // The router could not percent-decode a path segment: a malformed path id.
  if (err instanceof URIError) return ApiError.notFound();
  if (isConnectionError(err)) return new ApiError('unavailable', undefined, {}, { 'Retry-After': '5' });
  if (isStatementCancelled(err)) {
    return new ApiError(
      'unavailable',
      'The request ran longer than the database allows; narrow it or try again later.',
      { reason: 'statement_timeout' },
      { 'Retry-After': '5' },
    );
  }
  return new ApiError('internal_error');
}

/** The one place that writes the error body of docs/api.md "Requests". */
export function renderError(err: ApiError, requestId: string, livemode: boolean | undefined): RenderedResponse {
  const payload: Record<string, unknown> = {
    error: { code: err.code, message: err.message, details: err.details, requestId },
  };
  if (livemode !== undefined) payload.livemode = livemode;
  return { status: err.status, body: JSON.stringify(payload), headers: err.headers };
}

export function sendRendered(res: Response, rendered: RenderedResponse): void {
  res.statusCode = rendered.status;
  for (const name in rendered.headers) res.setHeader(name, rendered.headers[name]);
  if (rendered.status === 204) {
    res.end();
    return;
  }
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(rendered.body);
}

export function logUnexpected(err: unknown, req: Request): void {
  const apiError = toApiError(err);
  if (apiError.code === 'internal_error' || apiError.code === 'unavailable') {
    logger.error({ err, requestId: req.requestId, method: req.method, path: req.originalUrl.split('?', 1)[0] }, 'request failed');
  }
}

/**
 * A request that reached no route still answers a recognised key as a route would (docs/api.md
 * docs/api.md "Requests"): livemode in the body, the rate-limit headers, and its 429 once over the limit.
 * A key that cannot be identified leaves the original error as the answer.
 */
async function identifyCaller(req: Request, res: Response, guards: RequestGuards): Promise<{ auth?: AuthContext; rateLimited?: ApiError }> {
  if (req.auth || !req.headers.authorization) return { auth: req.auth };
  let auth: AuthContext;
  try {
    auth = await guards.keys.authenticate(req);
  } catch {
    return {};
  }
  try {
    await guards.rateLimiter.applyRateLimit(auth, req, res);
  } catch (err) {
    return { auth, rateLimited: toApiError(err) };
  }
  return { auth };
}

async function answerUnrouted(req: Request, res: Response, error: ApiError, guards: RequestGuards): Promise<void> {
  const { auth, rateLimited } = await identifyCaller(req, res, guards);
  if (res.headersSent) return;
  sendRendered(res, renderError(rateLimited ?? error, req.requestId, auth?.livemode));
}

/** The app's last handlers: a request no route took (404), an error no route answered; with the app's request guards. */
export function createFallbackHandlers(guards: RequestGuards) {
  return {
    async notFoundHandler(req: Request, res: Response): Promise<void> {
      await answerUnrouted(req, res, new ApiError('not_found', `No route for ${req.method} ${req.path}.`), guards);
    },
    async errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): Promise<void> {
      logUnexpected(err, req);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      await answerUnrouted(req, res, toApiError(err), guards);
    },
  };
}
