import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { apiKeys, organisations } from '../../db/schema/index.js';
import { scopes as knownScopes, type AuthContext } from '../../core/auth-context.js';
import { generateKey, hashKey, prefixForKey, type KeyKind } from '../../lib/api-key-format.js';

export async function createOrganisation(name: string, isTest: boolean) {
  const [org] = await db().insert(organisations).values({ name, isTest }).returning();
  return org;
}

export interface NewKey {
  organisationId: string;
  kind: KeyKind;
  name: string;
  scopes?: string[];
  venueIds?: string[] | null;
  allowedOrigins?: string[];
  rateLimitPerMinute?: number | null;
}

/** Creates a key and returns it in clear exactly once; only its hash is stored. */
export async function createApiKey(input: NewKey): Promise<{ id: string; key: string }> {
  const [org] = await db().select().from(organisations).where(eq(organisations.id, input.organisationId));
  if (!org) throw new Error(`organisation ${input.organisationId} does not exist`);
  if (org.isTest && input.kind === 'live') throw new Error('a test organisation has only test and publishable keys');
  if (!org.isTest && input.kind === 'test') throw new Error('test keys belong to test organisations (org:create --test)');
  const unknown = (input.scopes ?? []).filter((s) => !(knownScopes as readonly string[]).includes(s));
  if (unknown.length) throw new Error(`unknown scopes: ${unknown.join(', ')}`);
  const key = generateKey(prefixForKey(input.kind, org.isTest));
  const [row] = await db()
    .insert(apiKeys)
    .values({
      organisationId: input.organisationId,
      name: input.name,
      kind: input.kind,
      keyHash: hashKey(key),
      displayPrefix: key.slice(0, key.lastIndexOf('_') + 5),
      scopes: input.scopes ?? [...knownScopes],
      venueIds: input.venueIds && input.venueIds.length ? input.venueIds : null,
      allowedOrigins: input.allowedOrigins ?? [],
      rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    })
    .returning({ id: apiKeys.id });
  return { id: row.id, key };
}

export async function revokeApiKey(id: string): Promise<boolean> {
  const rows = await db()
    .update(apiKeys)
    .set({ revokedAt: new Date() })
    .where(and(eq(apiKeys.id, id), isNull(apiKeys.revokedAt)))
    .returning({ id: apiKeys.id });
  return rows.length > 0;
}

export async function listApiKeys(organisationId: string) {
  return db()
    .select({
      id: apiKeys.id,
      name: apiKeys.name,
      kind: apiKeys.kind,
      prefix: apiKeys.displayPrefix,
      scopes: apiKeys.scopes,
      venueIds: apiKeys.venueIds,
      allowedOrigins: apiKeys.allowedOrigins,
      revokedAt: apiKeys.revokedAt,
      createdAt: apiKeys.createdAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.organisationId, organisationId))
    .orderBy(asc(apiKeys.createdAt));
}

/** The key with this hash as the domain sees it, or null when no key has it. */
export async function findAuthContext(hash: string): Promise<AuthContext | null> {
  const rows = await db()
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

/** What an open live stream compares against: each key's current revocation, scopes and venues. */
export interface KeyState {
  revoked: boolean;
  scopes: readonly string[];
  venueIds: readonly string[] | null;
}

/** The current state of these keys; a key that no longer exists is absent. */
export async function findKeyStates(ids: readonly string[]): Promise<Map<string, KeyState>> {
  if (!ids.length) return new Map();
  const rows = await db()
    .select({ id: apiKeys.id, revokedAt: apiKeys.revokedAt, scopes: apiKeys.scopes, venueIds: apiKeys.venueIds })
    .from(apiKeys)
    .where(inArray(apiKeys.id, [...ids]));
  return new Map(rows.map((r) => [r.id, { revoked: r.revokedAt !== null, scopes: r.scopes, venueIds: r.venueIds }]));
}
