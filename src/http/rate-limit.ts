import type { Request, Response } from 'express';
import type { Config } from '../config.js';
import { logger } from '../logger.js';
import { getRedis, redisKey } from '../redis.js';
import { runScript, scripts } from '../redis/scripts.js';
import type { AuthContext } from '../core/auth-context.js';
import { ApiError } from '../core/errors.js';

const windowMs = 60_000;
const flushEveryMs = 50;
const maxTrackedSubjects = 10_000;
let lastWarning = 0;

/** INCRBY and, for a new window, its expiry, in one round trip (EVALSHA after the first call). */
function incrementWindow(key: string, by: number): Promise<number> {
  return runScript(getRedis(), scripts.incrementRateWindow, [key], [windowMs + 1000, by]);
}

/** `req`: the request whose hit could not be counted, whose id the line then carries (a batched send has none). */
function warnUnavailable(err: unknown, req?: Request): void {
  if (Date.now() - lastWarning > 10_000) {
    lastWarning = Date.now();
    logger.warn({ err: (err as Error).message, requestId: req?.requestId }, 'rate limiter unavailable, serving without a limit');
  }
}

/** What this process knows of one subject's current window. */
interface WindowCounter {
  key: string;
  window: number;
  /** The shared count in Redis at the last answer. */
  shared: number;
  /** Hits counted here and not yet sent / being sent to Redis. */
  pending: number;
  sending: number;
  synced: boolean;
  timer: NodeJS.Timeout | null;
}

/**
 * Far from the limit, hits are added to the shared Redis count in one INCRBY every 50 ms; near it
 * (and for the first hit of a window) every hit goes to Redis before answering, so that the 429
 * boundary is exact. Pure, so that it can be tested on its own.
 */
export function mustCountExactly(counter: Pick<WindowCounter, 'shared' | 'pending' | 'sending' | 'synced'>, limit: number): boolean {
  const margin = Math.max(10, Math.ceil(limit / 10));
  return !counter.synced || limit - (counter.shared + counter.pending + counter.sending) <= margin;
}

const counters = new Map<string, WindowCounter>();

function counterFor(subject: string, window: number): WindowCounter {
  let counter = counters.get(subject);
  if (!counter || counter.window !== window) {
    if (counters.size >= maxTrackedSubjects) counters.clear();
    counter = { key: redisKey(['rl', subject], String(window)), window, shared: 0, pending: 0, sending: 0, synced: false, timer: null };
    counters.set(subject, counter);
  }
  return counter;
}

async function send(counter: WindowCounter): Promise<void> {
  counter.timer = null;
  const batch = counter.pending;
  if (!batch) return;
  counter.pending = 0;
  counter.sending += batch;
  try {
    counter.shared = Math.max(counter.shared, await incrementWindow(counter.key, batch));
  } catch (err) {
    warnUnavailable(err);
  } finally {
    counter.sending -= batch;
  }
}

/** Counts one hit and returns the window's count as best known, shared by every instance. */
function countHit(subject: string, window: number, limit: number, req: Request): number | Promise<number> {
  const counter = counterFor(subject, window);
  if (mustCountExactly(counter, limit)) return countExactly(counter, req);
  counter.pending += 1;
  if (!counter.timer) {
    counter.timer = setTimeout(() => void send(counter), flushEveryMs);
    counter.timer.unref();
  }
  return counter.shared + counter.pending + counter.sending;
}

async function countExactly(counter: WindowCounter, req: Request): Promise<number> {
  // This process's unsent hits travel with this one, so that near the limit Redis knows them all.
  const batch = counter.pending + 1;
  counter.pending = 0;
  try {
    const total = await incrementWindow(counter.key, batch);
    counter.shared = Math.max(counter.shared, total);
    counter.synced = true;
    return total + counter.pending + counter.sending;
  } catch (err) {
    warnUnavailable(err, req);
    return 0;
  }
}

/** The request limits of the process: per key and minute, and failed authentications per client address and minute. */
export type RequestLimits = Pick<Config, 'RATE_LIMIT_PER_MINUTE' | 'RATE_LIMIT_WIDGET_PER_MINUTE' | 'AUTH_FAILURES_PER_MINUTE'>;

/**
 * Fixed one-minute windows counted in Redis, shared by every instance; fails open when Redis is down.
 * Synchronous far from the limit (the batched case), like authenticate on a cache hit.
 */
export function applyRateLimit(auth: AuthContext, req: Request, res: Response, limits: RequestLimits): void | Promise<void> {
  const widget = auth.kind === 'publishable';
  const limit = auth.rateLimitPerMinute ?? (widget ? limits.RATE_LIMIT_WIDGET_PER_MINUTE : limits.RATE_LIMIT_PER_MINUTE);
  const window = Math.floor(Date.now() / windowMs);
  const subject = widget ? `${auth.keyId}:${req.ip ?? 'unknown'}` : auth.keyId;
  const count = countHit(subject, window, limit, req);
  if (typeof count === 'number') return answerCount(count, limit, window, res);
  return count.then((known) => answerCount(known, limit, window, res));
}

function answerCount(count: number, limit: number, window: number, res: Response): void {
  const reset = Math.ceil(((window + 1) * windowMs) / 1000);
  res.setHeader('X-RateLimit-Limit', String(limit));
  res.setHeader('X-RateLimit-Remaining', String(Math.max(0, limit - count)));
  res.setHeader('X-RateLimit-Reset', String(reset));
  if (count > limit) {
    const retryAfter = Math.max(1, reset - Math.floor(Date.now() / 1000));
    throw new ApiError('rate_limited', `Rate limit of ${limit} requests per minute exceeded.`, {}, { 'Retry-After': String(retryAfter) });
  }
}
