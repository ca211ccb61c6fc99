import type { Request } from 'express';
import { ApiError } from '../core/errors.js';
import { BoundedCache } from '../lib/bounded-cache.js';

const windowMs = 60_000;
/** Client addresses tracked at once; the oldest windows go first when more try (docs/security.md). */
const maxTrackedAddresses = 50_000;

interface FailureWindow {
  count: number;
  endsAt: number;
}

function addressOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * Failed authentications (unknown key, wrong Bull Board password) per client address and minute, counted
 * by the app that owns it: each web process allows AUTH_FAILURES_PER_MINUTE per address (docs/security.md
 * "Limits").
 */
export class FailedAuthThrottle {
  private readonly failures = new BoundedCache<FailureWindow>(maxTrackedAddresses, windowMs);

  constructor(private readonly perMinute: number) {}

  /**
   * 429 for a client address that failed to authenticate `perMinute` times in its current minute:
   * guessing keys or passwords, or flooding the key lookup with random keys, stops there, before any lookup.
   */
  refuseThrottledClient(req: Request): void {
    const window = this.failures.get(addressOf(req));
    if (window && window.count >= this.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000));
      throw new ApiError(
        'rate_limited',
        'Too many failed authentications from this address; wait before trying again.',
        {},
        { 'Retry-After': String(retryAfter) },
      );
    }
  }

  /** Counts one failed authentication of the request's client address. */
  countFailure(req: Request): void {
    const address = addressOf(req);
    const window = this.failures.get(address);
    if (window) window.count += 1;
    else this.failures.set(address, { count: 1, endsAt: Date.now() + windowMs });
  }
}
