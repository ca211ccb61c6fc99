import type { Request } from 'express';
import { hashKey, isWellFormedKey } from '../lib/api-key-format.js';
import { ApiError } from '../core/errors.js';
import type { AuthContext } from '../core/auth-context.js';
import { findAuthContext } from '../services/keys/key-service.js';
import { BoundedCache } from '../lib/bounded-cache.js';
import { countFailedAuthentication, refuseThrottledClient } from './failed-auth-throttle.js';
import type { RequestLimits } from './rate-limit.js';

// Keys are cached per process for at most 4 s: revocation reaches every instance within 5 s
// without a database round trip on each request. Only keys that exist are cached, and a full cache
// drops its oldest entries: a flood of random keys (throttled per address anyway) cannot evict the
// valid ones.
const cacheTtlMs = 4000;
const maxCacheEntries = 10_000;
const keyCache = new BoundedCache<AuthContext>(maxCacheEntries, cacheTtlMs);

export function forgetCachedKeys(): void {
  keyCache.clear();
}

/**
 * Identifies the caller from the Authorization header or throws the 401 of docs/api.md "Keys, limits";
 * a client address with too many failures gets 429 before any lookup (failed-auth-throttle.ts).
 * Synchronous on a cache hit (nearly every request): an await per request is a microtask and a
 * promise the hot path does not need.
 */
export function authenticate(req: Request, limits: RequestLimits): AuthContext | Promise<AuthContext> {
  const header = req.headers.authorization;
  if (!header || !header.trim()) throw new ApiError('unauthenticated');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  // Keyed by the token itself, not its hash: hashing on every request cost more than the rest of
  // authentication, and the token is in this process's memory with each request anyway.
  const token = match?.[1];
  const cached = token === undefined ? undefined : keyCache.get(token);
  if (cached) return authorise(cached);
  refuseThrottledClient(req, limits.AUTH_FAILURES_PER_MINUTE);
  if (token === undefined || !isWellFormedKey(token)) return refuse(req);
  return findAuthContext(hashKey(token)).then((auth) => {
    if (!auth) return refuse(req);
    keyCache.set(token, auth);
    return authorise(auth);
  });
}

function refuse(req: Request): never {
  countFailedAuthentication(req);
  throw new ApiError('api_key_invalid');
}

function authorise(auth: AuthContext): AuthContext {
  if (auth.revoked) throw new ApiError('api_key_revoked');
  return auth;
}
