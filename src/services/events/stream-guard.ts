import type { AuthContext } from '../../core/auth-context.js';
import type { KeyState } from '../keys/key-service.js';

/** What a live stream was opened with: it stays open only while its key still grants exactly that. */
export interface StreamGrant {
  keyId: string;
  scopes: ReadonlySet<string>;
  venueIds: readonly string[] | null;
  openedAt: number;
}

export type StreamEndReason = 'max_lifetime' | 'key_revoked' | 'key_changed';

export function grantOf(auth: AuthContext, now: number): StreamGrant {
  return { keyId: auth.keyId, scopes: auth.scopes, venueIds: auth.venueIds, openedAt: now };
}

function sameMembers(a: Iterable<string>, b: readonly string[]): boolean {
  const set = new Set(a);
  return set.size === new Set(b).size && b.every((x) => set.has(x));
}

/**
 * Why a stream must end now (docs/security.md "Live streams"), or null: past its maximum lifetime,
 * its key revoked or deleted, or its scopes or venues changed (the client reconnects and is
 * authorised, and redacted, afresh).
 */
export function streamEndReason(
  grant: StreamGrant,
  current: KeyState | undefined,
  now: number,
  maxLifetimeMs: number,
): StreamEndReason | null {
  if (!current || current.revoked) return 'key_revoked';
  if (!sameMembers(grant.scopes, current.scopes)) return 'key_changed';
  if ((grant.venueIds === null) !== (current.venueIds === null)) return 'key_changed';
  if (grant.venueIds && current.venueIds && !sameMembers(grant.venueIds, current.venueIds)) return 'key_changed';
  if (now - grant.openedAt >= maxLifetimeMs) return 'max_lifetime';
  return null;
}
