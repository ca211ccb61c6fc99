import type { Request } from 'express';
import { eq } from 'drizzle-orm';
import { db } from '../db/client.js';
import { apiKeys, organisations } from '../db/schema/index.js';
import { hashKey, isWellFormedKey, type KeyKind } from '../lib/api-key-format.js';
import { ApiError } from './errors.js';

export const scopes = [
  'reservations:read',
  'reservations:write',
  'floor:read',
  'floor:write',
  'venues:read',
  'venues:write',
  'guests:read',
  'guests:write',
  'imports:write',
  'webhooks:read',
  'webhooks:write',
  'events:read',
] as const;
export type Scope = (typeof scopes)[number];

export interface AuthContext {
  keyId: string;
  keyName: string;
  organisationId: string;
  kind: KeyKind;
  livemode: boolean;
  scopes: ReadonlySet<string>;
  /** null: every venue of the organisation. */
  venueIds: readonly string[] | null;
  allowedOrigins: readonly string[];
  rateLimitPerMinute: number | null;
  revoked: boolean;
}

export function isPublishable(auth: AuthContext): boolean {
  return auth.kind === 'publishable';
}

export function hasScope(auth: AuthContext, scope: Scope): boolean {
  return auth.scopes.has(scope);
}

export function canSeeVenue(auth: AuthContext, venueId: string): boolean {
  return auth.venueIds === null || auth.venueIds.includes(venueId);
}

// Keys are cached per process for at most 4 s: revocation reaches every instance within 5 s
// without a database round trip on each request.
const cacheTtlMs = 4000;
const maxCacheEntries = 10_000;
const keyCache = new Map<string, { auth: AuthContext | null; expiresAt: number }>();

async function loadKey(hash: string): Promise<AuthContext | null> {
  const rows = await db
    .select({ key: apiKeys, isTest: organisations.isTest })
    .from(apiKeys)
    .innerJoin(organisations, eq(organisations.id, apiKeys.organisationId))
    .where(eq(apiKeys.keyHash, hash))
    .limit(1);
  const row = rows[0];
  if (!row) return null;
  const { key } = row;
  return {
    keyId: key.id,
    keyName: key.name,
    organisationId: key.organisationId,
    kind: key.kind,
    livemode: !row.isTest,
    scopes: new Set(key.scopes),
    venueIds: key.venueIds,
    allowedOrigins: key.allowedOrigins,
    rateLimitPerMinute: key.rateLimitPerMinute,
    revoked: key.revokedAt !== null,
  };
}

export function forgetCachedKeys(): void {
  keyCache.clear();
}

/**
 * Identifies the caller from the Authorization header or throws the 401 of interface.md §5.
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
  return loadKey(hashKey(token)).then((auth) => {
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
