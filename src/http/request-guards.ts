import type { Config } from '../config.js';
import { KeyAuthenticator } from './auth.js';
import { FailedAuthThrottle } from './failed-auth-throttle.js';
import { RateLimiter } from './rate-limit.js';

/** The request limits of the process: per key and minute, and failed authentications per client address and minute. */
export type RequestLimits = Pick<Config, 'RATE_LIMIT_PER_MINUTE' | 'RATE_LIMIT_WIDGET_PER_MINUTE' | 'AUTH_FAILURES_PER_MINUTE'>;

/** What stands before every handler of one app, each owning its own state (key cache, counters, failures). */
export interface RequestGuards {
  keys: KeyAuthenticator;
  rateLimiter: RateLimiter;
  failedAuth: FailedAuthThrottle;
}

export function createRequestGuards(limits: RequestLimits): RequestGuards {
  const failedAuth = new FailedAuthThrottle(limits.AUTH_FAILURES_PER_MINUTE);
  return { keys: new KeyAuthenticator(failedAuth), rateLimiter: new RateLimiter(limits), failedAuth };
}
