import { and, eq, getTableColumns, sql } from 'drizzle-orm';
import { z } from 'zod';
import { db, transaction, type DbOrTx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests, serviceTags, venues } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { violatedUniqueIndex } from '../../lib/unique-violation.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';

export type ServiceTagRow = typeof serviceTags.$inferSelect;

export const serviceTagSchema = component(
  'ServiceTag',
  z.object({ id: uuid, name: z.string(), updatedAt: instant }),
  'A service tag (docs/api.md).',
);

/** Service tag of docs/api.md, exactly. */
export function serviceTagJson(t: ServiceTagRow): z.output<typeof serviceTagSchema> {
  return { id: t.id, name: t.name, updatedAt: t.updatedAt.toISOString() };
}

/**
 * The venue's tag names keyed by their lower-case form: names are matched whatever their case.
 * Locked FOR SHARE: a rename or delete of a tag (FOR UPDATE) then waits until the guest written
 * with these names is committed, and so rewrites it too (no guest keeps a name that is gone).
 */
export async function loadServiceTagNames(conn: DbOrTx, venueId: string): Promise<Map<string, string>> {
  const rows = await conn.select({ name: serviceTags.name }).from(serviceTags).where(eq(serviceTags.venueId, venueId)).for('share');
  return new Map(rows.map((r) => [r.name.toLowerCase(), r.name]));
}

/** The tags' names as the venue spells them, or the names that are not tags of the venue. */
export function matchServiceTags(known: Map<string, string>, names: string[]): { names: string[] } | { unknown: string[] } {
  const unknown = names.filter((n) => !known.has(n.toLowerCase()));
  if (unknown.length) return { unknown };
  return { names: [...new Set(names.map((n) => known.get(n.toLowerCase())!))] };
}

/** Resolves a guest's `serviceTags` input or throws the 400 naming `serviceTags`. */
export async function resolveServiceTags(conn: DbOrTx, venueId: string, names: string[]): Promise<string[]> {
  if (!names.length) return [];
  const match = matchServiceTags(await loadServiceTagNames(conn, venueId), names);
  if ('unknown' in match) throw ApiError.invalid(['serviceTags'], `Unknown service tags of this venue: ${match.unknown.join(', ')}.`);
  return match.names;
}

function nameTaken(name: string): ApiError {
  return new ApiError('conflict', `The venue already has a service tag named "${name}".`, { fields: ['name'] });
}

export async function listServiceTags(auth: AuthContext, query: ListQuery & { venueId?: string }) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  return fetchPage<ServiceTagRow>({
    query,
    idColumn: serviceTags.id,
    naturalOrder: [{ column: serviceTags.createdAt, kind: 'instant', read: (t) => t.createdAt }],
    updatedAt: { column: serviceTags.updatedAt, kind: 'instant', read: (t) => t.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select(getTableColumns(serviceTags))
        .from(serviceTags)
        .innerJoin(venues, eq(venues.id, serviceTags.venueId))
        .where(
          and(
            eq(venues.organisationId, auth.organisationId),
            visibleVenueIds(auth, serviceTags.venueId),
            query.venueId ? eq(serviceTags.venueId, query.venueId) : undefined,
            keyset,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/** `lock`: the tag row is locked FOR UPDATE (read as the last committed writer left it). */
export async function getVisibleServiceTag(auth: AuthContext, id: string, conn: DbOrTx = db(), lock = false): Promise<ServiceTagRow> {
  const query = conn
    .select(getTableColumns(serviceTags))
    .from(serviceTags)
    .innerJoin(venues, eq(venues.id, serviceTags.venueId))
    .where(and(eq(serviceTags.id, id), eq(venues.organisationId, auth.organisationId), visibleVenueIds(auth, serviceTags.venueId)));
  const [row] = lock ? await query.for('update', { of: serviceTags }) : await query;
  if (!row) throw ApiError.notFound('Service tag');
  return row;
}

export async function createServiceTag(auth: AuthContext, input: { venueId: string; name: string }): Promise<ServiceTagRow> {
  await getVisibleVenue(auth, input.venueId);
  const [row] = await db().insert(serviceTags).values(input).onConflictDoNothing().returning();
  if (!row) throw nameTaken(input.name);
  return row;
}

/**
 * Renames a tag; guests carrying it are rewritten in the same transaction (tags are stored by name).
 * The tag row is locked first: concurrent renames and deletes of one tag queue, and each rewrites
 * the guests from the name the previous one left.
 */
export async function renameServiceTag(auth: AuthContext, id: string, name: string): Promise<ServiceTagRow> {
  try {
    return await transaction(async (tx) => {
      const tag = await getVisibleServiceTag(auth, id, tx, true);
      if (tag.name === name) return tag;
      const [row] = await tx
        .update(serviceTags)
        .set({ name, updatedAt: nextUpdatedAt(serviceTags.updatedAt) })
        .where(eq(serviceTags.id, id))
        .returning();
      await tx
        .update(guests)
        .set({
          serviceTags: sql`array_replace(${guests.serviceTags}, ${tag.name}::text, ${name}::text)`,
          updatedAt: nextUpdatedAt(guests.updatedAt),
        })
        .where(and(eq(guests.venueId, tag.venueId), sql`${tag.name}::text = any(${guests.serviceTags})`));
      return row;
    }, auth.signal);
  } catch (err) {
    if (violatedUniqueIndex(err) === 'service_tags_venue_name_idx') throw nameTaken(name);
    throw err;
  }
}

/** Deletes a tag and takes it off every guest of the venue, in one transaction. */
export async function deleteServiceTag(auth: AuthContext, id: string): Promise<void> {
  await transaction(async (tx) => {
    const tag = await getVisibleServiceTag(auth, id, tx, true);
    await tx.delete(serviceTags).where(eq(serviceTags.id, id));
    await tx
      .update(guests)
      .set({ serviceTags: sql`array_remove(${guests.serviceTags}, ${tag.name}::text)`, updatedAt: nextUpdatedAt(guests.updatedAt) })
      .where(and(eq(guests.venueId, tag.venueId), sql`${tag.name}::text = any(${guests.serviceTags})`));
  }, auth.signal);
}
