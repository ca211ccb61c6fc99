import { and, eq } from 'drizzle-orm';
import type { AnyPgColumn, PgTable } from 'drizzle-orm/pg-core';
import { db, transaction, type DbOrTx, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { fetchPage, type ListQuery, type Page, type SortKey } from '../pagination.js';
import { getVisibleVenue } from '../venues/venue-service.js';
import { lockVisibleVenue, type VenueAccess } from './venue-lock.js';

/**
 * The four venue rule resources (shifts, closures, turn-time rules, pacing rules) share one
 * life cycle: listed and changed per venue, every write checked as a whole against the venue's
 * other rules while the venue row is locked, so two concurrent writes cannot both pass a check
 * (two overlapping shifts, say) that either alone would fail.
 */
export interface RuleRow {
  id: string;
  venueId: string;
  createdAt: Date;
  updatedAt: Date;
}

export type RuleTable = PgTable & { id: AnyPgColumn; venueId: AnyPgColumn; createdAt: AnyPgColumn; updatedAt: AnyPgColumn };

export interface RuleKind<Row extends RuleRow, Fields extends object> {
  table: RuleTable;
  /** Names the resource in 404 messages. */
  label: string;
  /** The list order without changedAfter; creation order when absent. */
  naturalOrder?: SortKey<Row>[];
  /** Throws a 400 naming the fields when the complete rule is not acceptable for the venue. */
  check: (tx: Tx, venueId: string, rule: Fields, ruleId: string | null) => Promise<void>;
  /** Work that belongs to the same transaction as the deletion. */
  beforeDelete?: (tx: Tx, row: Row) => Promise<void>;
}

export async function listRules<Row extends RuleRow, Fields extends object>(
  kind: RuleKind<Row, Fields>,
  auth: AuthContext,
  venueId: string,
  query: ListQuery,
): Promise<Page<Row>> {
  await getVisibleVenue(auth, venueId);
  const { table } = kind;
  return fetchPage<Row>({
    query,
    idColumn: table.id,
    naturalOrder: kind.naturalOrder ?? [{ column: table.createdAt, kind: 'instant', read: (r) => r.createdAt }],
    updatedAt: { column: table.updatedAt, kind: 'instant', read: (r) => r.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(table)
        .where(and(eq(table.venueId, venueId), keyset))
        .orderBy(...orderBy)
        .limit(limit) as unknown as Promise<Row[]>,
  });
}

async function findRule<Row extends RuleRow>(
  conn: DbOrTx,
  kind: RuleKind<Row, object>,
  venueId: string,
  ruleId: string,
  lock: boolean,
): Promise<Row> {
  const query = conn
    .select()
    .from(kind.table)
    .where(and(eq(kind.table.id, ruleId), eq(kind.table.venueId, venueId)));
  const [row] = (await (lock ? query.for('update') : query)) as unknown as Row[];
  if (!row) throw ApiError.notFound(kind.label);
  return row;
}

export async function getRule<Row extends RuleRow, Fields extends object>(
  kind: RuleKind<Row, Fields>,
  auth: AuthContext,
  venueId: string,
  ruleId: string,
): Promise<Row> {
  await getVisibleVenue(auth, venueId);
  return findRule(db(), kind as RuleKind<Row, object>, venueId, ruleId, false);
}

export async function createRule<Row extends RuleRow, Fields extends object>(
  kind: RuleKind<Row, Fields>,
  access: VenueAccess,
  venueId: string,
  fields: Fields,
): Promise<Row> {
  return transaction(async (tx) => {
    await lockVisibleVenue(tx, access, venueId);
    await kind.check(tx, venueId, fields, null);
    const [row] = (await tx
      .insert(kind.table)
      .values({ ...fields, venueId } as never)
      .returning()) as unknown as Row[];
    return row;
  }, access.signal);
}

/** Applies a partial change; the rule as it would become is what gets checked. */
export async function updateRule<Row extends RuleRow & Fields, Fields extends object>(
  kind: RuleKind<Row, Fields>,
  access: VenueAccess,
  venueId: string,
  ruleId: string,
  patch: Partial<Fields>,
): Promise<Row> {
  return transaction(async (tx) => {
    await lockVisibleVenue(tx, access, venueId);
    const current = await findRule(tx, kind as RuleKind<Row, object>, venueId, ruleId, true);
    if (Object.keys(patch).length === 0) return current;
    await kind.check(tx, venueId, { ...current, ...patch }, ruleId);
    const [row] = (await tx
      .update(kind.table)
      .set({ ...patch, updatedAt: nextUpdatedAt(kind.table.updatedAt) } as never)
      .where(eq(kind.table.id, ruleId))
      .returning()) as unknown as Row[];
    return row;
  }, access.signal);
}

export async function deleteRule<Row extends RuleRow, Fields extends object>(
  kind: RuleKind<Row, Fields>,
  access: VenueAccess,
  venueId: string,
  ruleId: string,
): Promise<void> {
  await transaction(async (tx) => {
    await lockVisibleVenue(tx, access, venueId);
    const row = await findRule(tx, kind as RuleKind<Row, object>, venueId, ruleId, true);
    await kind.beforeDelete?.(tx, row);
    await tx.delete(kind.table).where(eq(kind.table.id, ruleId));
  }, access.signal);
}
