import type { Request } from 'express';
import { hashKey, isWellFormedKey } from '../lib/api-key-format.js';
import { ApiError } from '../core/errors.js';
import type { AuthContext } from '../core/auth-context.js';
import { findAuthContext } from '../services/keys/key-service.js';
import { BoundedCache } from '../lib/bounded-cache.js';
import type { FailedAuthThrottle } from './failed-auth-throttle.js';

// Keys are cached per app for at most 4 s: revocation reaches every instance within 5 s without a
// database round trip on each request. Only keys that exist are cached, and a full cache drops its
// oldest entries: a flood of random keys (throttled per address anyway) cannot evict the valid ones.
const cacheTtlMs = 4000;
const maxCacheEntries = 10_000;

/** Identifies API callers by their key; one per app, which owns its key cache. */
export class KeyAuthenticator {
  private readonly keyCache = new BoundedCache<AuthContext>(maxCacheEntries, cacheTtlMs);

  constructor(private readonly throttle: FailedAuthThrottle) {}

  /**
   * Identifies the caller from the Authorization header or throws the 401 of docs/api.md "Keys, limits";
   * a client address with too many failures gets 429 before any lookup (FailedAuthThrottle).
   * Synchronous on a cache hit (nearly every request): an await per request is a microtask and a
   * promise the hot path does not need.
   */
  authenticate(req: Request): AuthContext | Promise<AuthContext> {
    const header = req.headers.authorization;
    if (!header || !header.trim()) throw new ApiError('unauthenticated');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    // Keyed by the token itself, not its hash: hashing on every request cost more than the rest of
    // authentication, and the token is in this process's memory with each request anyway.
    const token = match?.[1];
    const cached = token === undefined ? undefined : this.keyCache.get(token);
    if (cached) return authorise(cached);
    this.throttle.refuseThrottledClient(req);
    if (token === undefined || !isWellFormedKey(token)) return this.refuse(req);
    return findAuthContext(hashKey(token)).then((auth) => {
      if (!auth) return this.refuse(req);
      this.keyCache.set(token, auth);
      return authorise(auth);
    });
  }

  private refuse(req: Request): never {
    this.throttle.countFailure(req);
    throw new ApiError('api_key_invalid');
  }
}

function authorise(auth: AuthContext): AuthContext {
  if (auth.revoked) throw new ApiError('api_key_revoked');
  return auth;
}
