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

// Per process: each web instance allows AUTH_FAILURES_PER_MINUTE per address (docs/security.md "Limits").
const failures = new BoundedCache<FailureWindow>(maxTrackedAddresses, windowMs);

function addressOf(req: Request): string {
  return req.ip ?? req.socket.remoteAddress ?? 'unknown';
}

/**
 * 429 for a client address that failed to authenticate `perMinute` (AUTH_FAILURES_PER_MINUTE) times in its
 * current minute: guessing keys or passwords, or flooding the key lookup with random keys, stops
 * there, before any lookup.
 */
export function refuseThrottledClient(req: Request, perMinute: number): void {
  const window = failures.get(addressOf(req));
  if (window && window.count >= perMinute) {
    const retryAfter = Math.max(1, Math.ceil((window.endsAt - Date.now()) / 1000));
    throw new ApiError(
      'rate_limited',
      'Too many failed authentications from this address; wait before trying again.',
      {},
      { 'Retry-After': String(retryAfter) },
    );
  }
}

/** Counts one failed authentication (unknown key, wrong password) of the request's client address. */
export function countFailedAuthentication(req: Request): void {
  const address = addressOf(req);
  const window = failures.get(address);
  if (window) window.count += 1;
  else failures.set(address, { count: 1, endsAt: Date.now() + windowMs });
}
