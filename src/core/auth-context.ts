import type { KeyKind } from '../lib/api-key-format.js';

/** Who is calling: the API key behind a request, as the domain sees it (no HTTP in here). */
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
  /**
   * The caller's presence, for one request: aborted once its client has gone before the answer was
   * complete. Services pass it to the transactions they open for the request (transaction,
   * transactionWithEvents), which then begin and commit nothing more and have their running statement
   * cancelled. Absent on what must happen whether or not the caller stays (a key's cached context,
   * background work).
   */
  signal?: AbortSignal;
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
