import type { Request } from 'express';
import { hashKey, isWellFormedKey } from '../lib/api-key-format.js';
import { ApiError } from '../core/errors.js';
import type { AuthContext } from '../core/auth-context.js';
import { findAuthContext } from '../services/keys/key-service.js';

// Keys are cached per process for at most 4 s: revocation reaches every instance within 5 s
// without a database round trip on each request.
const cacheTtlMs = 4000;
const maxCacheEntries = 10_000;
const keyCache = new Map<string, { auth: AuthContext | null; expiresAt: number }>();

export function forgetCachedKeys(): void {
  keyCache.clear();
}

/**
 * Identifies the caller from the Authorization header or throws the 401 of docs/api.md "Keys, limits".
 * Synchronous on a cache hit (nearly every request): an await per request is a microtask and a
 * promise the hot path does not need.
 */
export function authenticate(req: Request): AuthContext | Promise<AuthContext> {
  const header = req.headers.authorization;
  if (!header || !header.trim()) throw new ApiError('unauthenticated');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match || !isWellFormedKey(match[1])) throw new ApiError('api_key_invalid');
  const token = match[1];
  // Keyed by the token itself, not its hash: hashing on every request cost more than the rest of
  // authentication, and the token is in this process's memory with each request anyway.
  const cached = keyCache.get(token);
  if (cached && cached.expiresAt > Date.now()) return authorise(cached.auth);
  return findAuthContext(hashKey(token)).then((auth) => {
    if (keyCache.size >= maxCacheEntries) keyCache.clear();
    keyCache.set(token, { auth, expiresAt: Date.now() + cacheTtlMs });
    return authorise(auth);
  });
}

function authorise(auth: AuthContext | null): AuthContext {
  if (!auth) throw new ApiError('api_key_invalid');
  if (auth.revoked) throw new ApiError('api_key_revoked');
  return auth;
}
