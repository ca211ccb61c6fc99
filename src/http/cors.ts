import type { Request, Response } from 'express';
import type { AuthContext } from '../core/auth-context.js';
import { ApiError } from '../core/errors.js';

const allowHeaders = 'Authorization, Content-Type, Idempotency-Key, X-Request-Id';
const exposeHeaders = 'X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After';

/** Preflight of the widget paths answers any origin: the real request is the one checked. */
export function answerPreflight(req: Request, res: Response, methods: string[]): void {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
  }
  res.setHeader('Access-Control-Allow-Methods', methods.join(', '));
  res.setHeader('Access-Control-Allow-Headers', allowHeaders);
  res.setHeader('Access-Control-Max-Age', '600');
  res.status(204).end();
}

/** A publishable key is usable only from the sites it lists. */
export function checkWidgetOrigin(auth: AuthContext, req: Request, res: Response): void {
  const origin = req.headers.origin;
  if (!origin || !auth.allowedOrigins.includes(origin)) {
    throw new ApiError('forbidden', 'This publishable key is not allowed from this origin.', { reason: 'origin_not_allowed' });
  }
  res.setHeader('Access-Control-Allow-Origin', origin);
  res.setHeader('Access-Control-Expose-Headers', exposeHeaders);
  res.setHeader('Vary', 'Origin');
}
