import type { Request, Response } from 'express';
import type { Redis } from 'ioredis';
import { config } from '../config.js';
import { logger } from '../logger.js';
import { getRedis, redisKey } from '../redis.js';
import type { AuthContext } from './auth.js';
import { ApiError } from './errors.js';

const windowMs = 60_000;
let lastWarning = 0;

// One round trip per request: INCR and, for a new window, its expiry (EVALSHA after the first call).
const incrementScript = `local c = redis.call('INCR', KEYS[1]) if c == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end return c`;
type WithIncrement = Redis & { incrementWindow(key: string, ttlMs: number): Promise<number> };
let scripted: WithIncrement | undefined;

function incrementWindow(key: string): Promise<number> {
  const redis = getRedis() as WithIncrement;
  if (scripted !== redis) {
    redis.defineCommand('incrementWindow', { numberOfKeys: 1, lua: incrementScript });
    scripted = redis;
  }
  return redis.incrementWindow(key, windowMs + 1000);
}

/** Fixed one-minute windows counted in Redis, shared by every instance; fails open when Redis is down. */
export async function applyRateLimit(auth: AuthContext, req: Request, res: Response): Promise<void> {
  const widget = auth.kind === 'publishable';
  const limit = auth.rateLimitPerMinute ?? (widget ? config.RATE_LIMIT_WIDGET_PER_MINUTE : config.RATE_LIMIT_PER_MINUTE);
  const window = Math.floor(Date.now() / windowMs);
  const reset = Math.ceil(((window + 1) * windowMs) / 1000);
  const subject = widget ? `${auth.keyId}:${req.ip ?? 'unknown'}` : auth.keyId;
  let count = 0;
  try {
    count = await incrementWindow(redisKey('rl', subject, String(window)));
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
