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

/** INCRBY and, for a new window, its expiry, in one round trip (EVALSHA after the first call). */
function incrementWindow(key: string, by: number): Promise<number> {
  return runScript(getRedis(), scripts.incrementRateWindow, [key], [windowMs + 1000, by]);
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

/**
 * Fixed one-minute windows counted in Redis, shared by every instance; fails open when Redis is down.
 * One per app, which owns what it knows of each window (the counts not yet sent to Redis).
 */
export class RateLimiter {
  private readonly counters = new Map<string, WindowCounter>();
  private lastWarning = 0;

  constructor(private readonly limits: Pick<Config, 'RATE_LIMIT_PER_MINUTE' | 'RATE_LIMIT_WIDGET_PER_MINUTE'>) {}

  /** Counts the request against its key's window; 429 over the limit. Synchronous far from the limit (the batched case). */
  applyRateLimit(auth: AuthContext, req: Request, res: Response): void | Promise<void> {
    const widget = auth.kind === 'publishable';
    const limit = auth.rateLimitPerMinute ?? (widget ? this.limits.RATE_LIMIT_WIDGET_PER_MINUTE : this.limits.RATE_LIMIT_PER_MINUTE);
    const window = Math.floor(Date.now() / windowMs);
    const subject = widget ? `${auth.keyId}:${req.ip ?? 'unknown'}` : auth.keyId;
    const count = this.countHit(subject, window, limit, req);
    if (typeof count === 'number') return answerCount(count, limit, window, res);
    return count.then((known) => answerCount(known, limit, window, res));
  }

  /** Counts one hit and returns the window's count as best known, shared by every instance. */
  private countHit(subject: string, window: number, limit: number, req: Request): number | Promise<number> {
    const counter = this.counterFor(subject, window);
    if (mustCountExactly(counter, limit)) return this.countExactly(counter, req);
    counter.pending += 1;
    if (!counter.timer) {
      counter.timer = setTimeout(() => void this.send(counter), flushEveryMs);
      counter.timer.unref();
    }
    return counter.shared + counter.pending + counter.sending;
  }

  private counterFor(subject: string, window: number): WindowCounter {
    let counter = this.counters.get(subject);
    if (!counter || counter.window !== window) {
      if (this.counters.size >= maxTrackedSubjects) this.counters.clear();
      counter = { key: redisKey(['rl', subject], String(window)), window, shared: 0, pending: 0, sending: 0, synced: false, timer: null };
      this.counters.set(subject, counter);
    }
    return counter;
  }

  private async send(counter: WindowCounter): Promise<void> {
    counter.timer = null;
    const batch = counter.pending;
    if (!batch) return;
    counter.pending = 0;
    counter.sending += batch;
    try {
      counter.shared = Math.max(counter.shared, await incrementWindow(counter.key, batch));
    } catch (err) {
      this.warnUnavailable(err);
    } finally {
      counter.sending -= batch;
    }
  }

  private async countExactly(counter: WindowCounter, req: Request): Promise<number> {
    // This process's unsent hits travel with this one, so that near the limit Redis knows them all.
    const batch = counter.pending + 1;
    counter.pending = 0;
    try {
      const total = await incrementWindow(counter.key, batch);
      counter.shared = Math.max(counter.shared, total);
      counter.synced = true;
      return total + counter.pending + counter.sending;
    } catch (err) {
      this.warnUnavailable(err, req);
      return 0;
    }
  }

  /** `req`: the request whose hit could not be counted, whose id the line then carries (a batched send has none). */
  private warnUnavailable(err: unknown, req?: Request): void {
    if (Date.now() - this.lastWarning > 10_000) {
      this.lastWarning = Date.now();
      logger.warn({ err: (err as Error).message, requestId: req?.requestId }, 'rate limiter unavailable, serving without a limit');
    }
  }
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
