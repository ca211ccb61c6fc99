import { and, eq, getTableColumns, isNull } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { areas, floorPlans, floorTables, tableCombinations } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { fetchPage, type ListQuery, type Page } from '../pagination.js';
import { getVisibleVenue } from '../venues/venue-service.js';
import {
  areaJson,
  combinationIdsByTable,
  floorPlanJson,
  floorPlanView,
  loadPlanContents,
  tableJson,
  type AreaRow,
  type FloorPlanRow,
  type FloorTableRow,
} from './floor-plan-views.js';

const emptyPage = { data: [], nextCursor: null };

async function activePlanId(venueId: string): Promise<string | null> {
  const [plan] = await db()
    .select({ id: floorPlans.id })
    .from(floorPlans)
    .where(and(eq(floorPlans.venueId, venueId), eq(floorPlans.isActive, true)));
  return plan?.id ?? null;
}

export async function listFloorPlans(auth: AuthContext, venueId: string, query: ListQuery) {
  await getVisibleVenue(auth, venueId);
  const page: Page<FloorPlanRow> = await fetchPage<FloorPlanRow>({
    query,
    idColumn: floorPlans.id,
    naturalOrder: [{ column: floorPlans.createdAt, kind: 'instant', read: (p) => p.createdAt }],
    updatedAt: { column: floorPlans.updatedAt, kind: 'instant', read: (p) => p.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(floorPlans)
        .where(and(eq(floorPlans.venueId, venueId), keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
  const contents = await loadPlanContents(
    db(),
    page.rows.map((p) => p.id),
  );
  return { data: page.rows.map((p) => floorPlanJson(p, contents.get(p.id)!)), nextCursor: page.nextCursor };
}

export async function getFloorPlan(auth: AuthContext, venueId: string, planId: string) {
  await getVisibleVenue(auth, venueId);
  const [plan] = await db()
    .select()
    .from(floorPlans)
    .where(and(eq(floorPlans.id, planId), eq(floorPlans.venueId, venueId)));
  if (!plan) throw ApiError.notFound('Floor plan');
  return floorPlanView(db(), plan);
}

type TableListRow = FloorTableRow & { areaPosition: number };

/**
 * The live tables of the active plan, by area position then name (docs/api.md "Requests"). Tables and
 * areas carry no deletedAt in the contract, so `changedAfter` lists live items only; a removal
 * shows as a new `version` of the floor plan.
 */
export async function listTables(auth: AuthContext, venueId: string, query: ListQuery) {
  await getVisibleVenue(auth, venueId);
  const planId = await activePlanId(venueId);
  // Without an active plan the page is empty, but its parameters are still checked (a bad cursor is a 400).
  const page = await fetchPage<TableListRow>({
    query,
    idColumn: floorTables.id,
    naturalOrder: [
      { column: areas.position, kind: 'number', read: (t) => t.areaPosition },
      { column: floorTables.name, kind: 'text', read: (t) => t.name },
    ],
    updatedAt: { column: floorTables.updatedAt, kind: 'instant', read: (t) => t.updatedAt },
    fetch: async (keyset, orderBy, limit) =>
      planId
        ? db()
            .select({ ...getTableColumns(floorTables), areaPosition: areas.position })
            .from(floorTables)
            .innerJoin(areas, eq(areas.id, floorTables.areaId))
            .where(and(eq(floorTables.floorPlanId, planId), isNull(floorTables.deletedAt), keyset))
            .orderBy(...orderBy)
            .limit(limit)
        : [],
  });
  if (!planId) return emptyPage;
  const combinations = await db()
    .select()
    .from(tableCombinations)
    .where(and(eq(tableCombinations.floorPlanId, planId), isNull(tableCombinations.deletedAt)));
  const byTable = combinationIdsByTable(combinations);
  return { data: page.rows.map((t) => tableJson(t, byTable.get(t.id) ?? [])), nextCursor: page.nextCursor };
}

/** The live areas of the active plan, by position then name. */
export async function listAreas(auth: AuthContext, venueId: string, query: ListQuery) {
  await getVisibleVenue(auth, venueId);
  const planId = await activePlanId(venueId);
  const page = await fetchPage<AreaRow>({
    query,
    idColumn: areas.id,
    naturalOrder: [
      { column: areas.position, kind: 'number', read: (a) => a.position },
      { column: areas.name, kind: 'text', read: (a) => a.name },
    ],
    updatedAt: { column: areas.updatedAt, kind: 'instant', read: (a) => a.updatedAt },
    fetch: async (keyset, orderBy, limit) =>
      planId
        ? db()
            .select()
            .from(areas)
            .where(and(eq(areas.floorPlanId, planId), isNull(areas.deletedAt), keyset))
            .orderBy(...orderBy)
            .limit(limit)
        : [],
  });
  return { data: page.rows.map(areaJson), nextCursor: page.nextCursor };
}
