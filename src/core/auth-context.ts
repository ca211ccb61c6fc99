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
