import type { Request, Response } from 'express';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { getRedis, redisKey } from '../redis.js';
import type { AuthContext } from './auth.js';
import { ApiError } from './errors.js';

const windowMs = 60_000;
let lastWarning = 0;

/** Fixed one-minute windows counted in Redis, shared by every instance; fails open when Redis is down. */
export async function applyRateLimit(auth: AuthContext, req: Request, res: Response): Promise<void> {
  const widget = auth.kind === 'publishable';
  const limit = auth.rateLimitPerMinute ?? (widget ? config.RATE_LIMIT_WIDGET_PER_MINUTE : config.RATE_LIMIT_PER_MINUTE);
  const window = Math.floor(Date.now() / windowMs);
  const reset = Math.ceil(((window + 1) * windowMs) / 1000);
  const subject = widget ? `${auth.keyId}:${req.ip ?? 'unknown'}` : auth.keyId;
  let count = 0;
  try {
    // The window is part of the key, so re-arming its expiry on every hit is harmless.
    const key = redisKey('rl', subject, String(window));
    const results = await getRedis().pipeline().incr(key).pexpire(key, windowMs + 1000).exec();
    count = Number(results?.[0]?.[1] ?? 0);
  } catch (err) {
    if (Date.now() - lastWarning > 10_000) {
      lastWarning = Date.now();
      logger.warn({ err: (err as Error).message }, 'rate limiter unavailable, serving without a limit');
    }
  }
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - count)));
  res.setHeader('X-RateLimit-Reset', String(reset));
  if (count > limit) {
    const retryAfter = Math.max(1, reset - Math.floor(Date.now() / 1000));
    throw new ApiError('rate_limited', `Rate limit of ${limit} requests per minute exceeded.`, {}, { 'Retry-After': String(retryAfter) });
  }
}
