import type { NextFunction, Request, Response } from 'express';
import { logger } from '../logger.js';
import { ApiError } from './errors.js';

export interface RenderedResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

const connectionErrorCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P03', // cannot_connect_now
]);

function isUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && connectionErrorCodes.has(code)) return true;
    if (e instanceof AggregateError && e.errors.some(isUnavailable)) return true;
  }
  return false;
}

/** Maps anything thrown to an ApiError; unknown errors become the fixed 500. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const bodyError = err as { type?: string; status?: number };
  if (bodyError?.type === 'entity.too.large') return new ApiError('payload_too_large');
  if (bodyError?.type === 'entity.parse.failed') return ApiError.invalid(['body'], 'The request body is not valid JSON.');
  if (bodyError?.type === 'encoding.unsupported' || bodyError?.type === 'charset.unsupported') {
    return ApiError.invalid(['body'], 'The request body encoding is not supported.');
  }
  if (isUnavailable(err)) return new ApiError('unavailable', undefined, {}, { 'Retry-After': '5' });
  return new ApiError('internal_error');
}

/** The one place that writes the error body of interface.md §7. */
export function renderError(err: ApiError, requestId: string, livemode: boolean | undefined): RenderedResponse {
  const payload: Record<string, unknown> = {
    error: { code: err.code, message: err.message, details: err.details, requestId },
  };
  if (livemode !== undefined) payload.livemode = livemode;
  return { status: err.status, body: JSON.stringify(payload), headers: err.headers };
}

export function sendRendered(res: Response, rendered: RenderedResponse): void {
  res.status(rendered.status);
  for (const [name, value] of Object.entries(rendered.headers)) res.setHeader(name, value);
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
    logger.error({ err, requestId: req.requestId, method: req.method, path: req.path }, 'request failed');
  }
}

export function errorHandler(err: unknown, req: Request, res: Response, _next: NextFunction): void {
  logUnexpected(err, req);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendRendered(res, renderError(toApiError(err), req.requestId, req.auth?.livemode));
}

export function notFoundHandler(req: Request, res: Response): void {
  sendRendered(res, renderError(new ApiError('not_found', `No route for ${req.method} ${req.path}.`), req.requestId, undefined));
}
