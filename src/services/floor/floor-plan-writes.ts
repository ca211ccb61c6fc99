import { randomUUID } from 'node:crypto';
import { and, eq, inArray, isNull, notInArray, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { areas, floorPlans, floorTables, tableCombinations } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { transactionWithEvents, type Actor } from '../outbox/outbox.js';
import { releaseInvalidTableAssignments } from '../reservations/release-invalid-assignments.js';
import { offerUnblockedTable } from '../waitlist/offer-freed-table.js';
import { lockVisibleVenue, type VenueAccess } from '../venue-config/venue-lock.js';
import { checkFloorPlanContents, type FloorPlanContentsInput } from './floor-plan-input.js';
import { combinationIdsByTable, floorPlanView, tableJson, type FloorPlanRow } from './floor-plan-views.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';

/**
 * Every change of the floor is one function here, running in one transactionWithEvents after
 * locking the venue row: floor writes of a venue are serialised (two activations cannot both
 * win), and whatever a change must do to the venue's reservations belongs in that transaction.
 */

type PlanItemTable = typeof areas | typeof floorTables | typeof tableCombinations;
interface PlanItemRow {
  id: string;
  deletedAt: Date | null;
}
interface ItemWrite {
  id: string;
  values: Record<string, unknown>;
}

/** A plan's version: its integer `version`, or the `updatedAt` instant that the ETag carries. */
export type PlanVersionCondition = { version: number } | { updatedAt: Date };

/** The SET of any change of a plan: `version` counts every change (docs/venue-configuration.md). */
function planChange(set: { name?: string; isActive?: boolean } = {}) {
  return { ...set, version: sql`${floorPlans.version} + 1`, updatedAt: nextUpdatedAt(floorPlans.updatedAt) };
}

async function lockPlan(tx: Tx, venueId: string, planId: string): Promise<FloorPlanRow> {
  const [plan] = await tx
    .select()
    .from(floorPlans)
    .where(and(eq(floorPlans.id, planId), eq(floorPlans.venueId, venueId)))
    .for('update');
  if (!plan) throw ApiError.notFound('Floor plan');
  return plan;
}

/**
 * Final ids of the body's items: ids of the plan's own items are kept; another id is the
 * client's choice for a new item and is used unless a row of any plan already has it (a body
 * copied from another plan), in which case the new item gets a fresh id.
 */
async function resolveIds(
  tx: Tx,
  table: PlanItemTable,
  ownIds: ReadonlySet<string>,
  items: readonly { id?: string }[],
): Promise<Map<string, string>> {
  const foreign = items.flatMap((i) => (i.id !== undefined && !ownIds.has(i.id) ? [i.id] : []));
  const taken = foreign.length
    ? new Set((await tx.select({ id: table.id }).from(table).where(inArray(table.id, foreign))).map((r) => r.id))
    : new Set();
  return new Map(items.flatMap((i) => (i.id === undefined ? [] : [[i.id, taken.has(i.id) ? randomUUID() : i.id] as const])));
}

function sameValue(a: unknown, b: unknown): boolean {
  return Array.isArray(a) || Array.isArray(b) ? JSON.stringify(a) === JSON.stringify(b) : a === b;
}

/** Inserts new items, updates kept items that differ (reviving soft-deleted ones), soft-deletes the rest. */
async function syncPlanItems(
  tx: Tx,
  table: PlanItemTable,
  plan: FloorPlanRow,
  existing: readonly PlanItemRow[],
  items: readonly ItemWrite[],
): Promise<void> {
  const byId = new Map(existing.map((row) => [row.id, row as PlanItemRow & Record<string, unknown>]));
  const inserts: Record<string, unknown>[] = [];
  for (const item of items) {
    const row = byId.get(item.id);
    if (!row) {
      inserts.push({ id: item.id, venueId: plan.venueId, floorPlanId: plan.id, ...item.values });
    } else if (row.deletedAt !== null || Object.entries(item.values).some(([k, v]) => !sameValue(row[k], v))) {
      await tx
        .update(table)
        .set({ ...item.values, deletedAt: null, updatedAt: nextUpdatedAt(table.updatedAt) } as never)
        .where(eq(table.id, item.id));
    }
  }
  if (inserts.length) await tx.insert(table).values(inserts as never);
  const keptIds = items.map((i) => i.id);
  await tx
    .update(table)
    .set({ deletedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(table.updatedAt) } as never)
    .where(and(eq(table.floorPlanId, plan.id), isNull(table.deletedAt), keptIds.length ? notInArray(table.id, keptIds) : undefined));
}

/** Makes the plan's areas, tables and combinations those of the body (ids as in resolveIds). */
async function writePlanContents(tx: Tx, plan: FloorPlanRow, input: FloorPlanContentsInput): Promise<void> {
  checkFloorPlanContents(input);
  const [areaRows, tableRows, combinationRows] = await Promise.all([
    tx.select().from(areas).where(eq(areas.floorPlanId, plan.id)),
    tx.select().from(floorTables).where(eq(floorTables.floorPlanId, plan.id)),
    tx.select().from(tableCombinations).where(eq(tableCombinations.floorPlanId, plan.id)),
  ]);
  const own = (rows: readonly PlanItemRow[]) => new Set(rows.map((r) => r.id));
  const areaIds = await resolveIds(tx, areas, own(areaRows), input.areas);
  const tableIds = await resolveIds(tx, floorTables, own(tableRows), input.tables);
  const combinationIds = await resolveIds(tx, tableCombinations, own(combinationRows), input.combinations);
  const finalId = (ids: Map<string, string>, id: string | undefined) => (id === undefined ? randomUUID() : ids.get(id)!);
  const areaById = new Map(areaRows.map((r) => [r.id, r]));
  const tableById = new Map(tableRows.map((r) => [r.id, r]));

  // An optional field left out keeps the current value of a kept item, or takes the default.
  await syncPlanItems(
    tx,
    areas,
    plan,
    areaRows,
    input.areas.map((a, index) => {
      const id = finalId(areaIds, a.id);
      return {
        id,
        values: {
          name: a.name,
          icon: a.icon ?? areaById.get(id)?.icon ?? 'room',
          position: a.position ?? index,
          widthCm: a.widthCm,
          heightCm: a.heightCm,
        },
      };
    }),
  );
  await syncPlanItems(
    tx,
    floorTables,
    plan,
    tableRows,
    input.tables.map((t) => {
      const id = finalId(tableIds, t.id);
      const current = tableById.get(id);
      return {
        id,
        values: {
          areaId: areaIds.get(t.areaId)!,
          name: t.name,
          shape: t.shape ?? current?.shape ?? 'square',
          minSeats: t.minSeats,
          maxSeats: t.maxSeats,
          positionXCm: t.positionXCm ?? current?.positionXCm ?? 0,
          positionYCm: t.positionYCm ?? current?.positionYCm ?? 0,
          widthCm: t.widthCm ?? current?.widthCm ?? 80,
          heightCm: t.heightCm ?? current?.heightCm ?? 80,
          rotationDegrees: t.rotationDegrees ?? current?.rotationDegrees ?? 0,
          isBlocked: t.isBlocked ?? current?.isBlocked ?? false,
        },
      };
    }),
  );
  await syncPlanItems(
    tx,
    tableCombinations,
    plan,
    combinationRows,
    input.combinations.map((c) => ({ id: finalId(combinationIds, c.id), values: { tableIds: c.tableIds.map((id) => tableIds.get(id)!) } })),
  );
}

/** POST /venues/:id/floor-plans: the venue's first plan (or any plan while none is active) becomes active. */
export async function createFloorPlan(
  access: VenueAccess,
  actor: Actor,
  venueId: string,
  input: FloorPlanContentsInput & { name: string },
  log: Logger = logger,
) {
  return transactionWithEvents(
    actor,
    async (tx) => {
      await lockVisibleVenue(tx, access, venueId);
      const [active] = await tx
        .select({ id: floorPlans.id })
        .from(floorPlans)
        .where(and(eq(floorPlans.venueId, venueId), eq(floorPlans.isActive, true)));
      const [plan] = await tx.insert(floorPlans).values({ venueId, name: input.name, isActive: !active }).returning();
      await writePlanContents(tx, plan, input);
      return floorPlanView(tx, plan);
    },
    log,
    access.signal,
  );
}

function matchesVersion(plan: FloorPlanRow, expected: PlanVersionCondition): boolean {
  return 'version' in expected ? plan.version === expected.version : plan.updatedAt.getTime() === expected.updatedAt.getTime();
}

/** PUT /venues/:id/floor-plans/:planId: replaces the plan's contents; items left out are soft-deleted. */
export async function replaceFloorPlan(
  access: VenueAccess,
  actor: Actor,
  venueId: string,
  planId: string,
  input: FloorPlanContentsInput & { name?: string },
  expected?: PlanVersionCondition,
  log: Logger = logger,
) {
  return transactionWithEvents(
    actor,
    async (tx, emit) => {
      await lockVisibleVenue(tx, access, venueId);
      const current = await lockPlan(tx, venueId, planId);
      if (expected && !matchesVersion(current, expected)) {
        throw new ApiError('conflict', `The floor plan is at version ${current.version}; read it again and repeat the change.`, {
          reason: 'version_mismatch',
        });
      }
      await writePlanContents(tx, current, input);
      const [plan] = await tx
        .update(floorPlans)
        .set(planChange(input.name === undefined ? {} : { name: input.name }))
        .where(eq(floorPlans.id, planId))
        .returning();
      await releaseInvalidTableAssignments(tx, emit, venueId);
      return floorPlanView(tx, plan);
    },
    log,
    access.signal,
  );
}

/**
 * POST /venues/:id/floor-plans/:planId/activate: the plan becomes the venue's only active plan.
 * The newly shown areas and tables get a new updatedAt, so that `changedAfter` on the area and
 * table lists (which show the active plan) reports them.
 */
export async function activateFloorPlan(access: VenueAccess, actor: Actor, venueId: string, planId: string, log: Logger = logger) {
  return transactionWithEvents(
    actor,
    async (tx, emit) => {
      await lockVisibleVenue(tx, access, venueId);
      const current = await lockPlan(tx, venueId, planId);
      if (current.isActive) return floorPlanView(tx, current);
      await tx
        .update(floorPlans)
        .set(planChange({ isActive: false }))
        .where(and(eq(floorPlans.venueId, venueId), eq(floorPlans.isActive, true)));
      const [plan] = await tx
        .update(floorPlans)
        .set(planChange({ isActive: true }))
        .where(eq(floorPlans.id, planId))
        .returning();
      for (const table of [areas, floorTables] as const) {
        await tx
          .update(table)
          .set({ updatedAt: nextUpdatedAt(table.updatedAt) })
          .where(and(eq(table.floorPlanId, planId), isNull(table.deletedAt)));
      }
      await releaseInvalidTableAssignments(tx, emit, venueId);
      return floorPlanView(tx, plan);
    },
    log,
    access.signal,
  );
}

/** PATCH /venues/:id/tables/:tableId: blocks or unblocks a table; the plan's version moves only on a real change. */
export async function setTableBlocked(
  access: VenueAccess,
  actor: Actor,
  venueId: string,
  tableId: string,
  isBlocked: boolean,
  log: Logger = logger,
) {
  return transactionWithEvents(
    actor,
    async (tx, emit) => {
      await lockVisibleVenue(tx, access, venueId);
      const [current] = await tx
        .select()
        .from(floorTables)
        .where(and(eq(floorTables.id, tableId), eq(floorTables.venueId, venueId), isNull(floorTables.deletedAt)))
        .for('update');
      if (!current) throw ApiError.notFound('Table');
      let table = current;
      if (current.isBlocked !== isBlocked) {
        [table] = await tx
          .update(floorTables)
          .set({ isBlocked, updatedAt: nextUpdatedAt(floorTables.updatedAt) })
          .where(eq(floorTables.id, tableId))
          .returning();
        await tx.update(floorPlans).set(planChange()).where(eq(floorPlans.id, table.floorPlanId));
        if (isBlocked) await releaseInvalidTableAssignments(tx, emit, venueId);
        // Waiting list: the table back in use may seat a waiting party now.
        else await offerUnblockedTable(tx, emit, venueId, tableId);
      }
      const combinations = await tx
        .select()
        .from(tableCombinations)
        .where(and(eq(tableCombinations.floorPlanId, table.floorPlanId), isNull(tableCombinations.deletedAt)));
      return tableJson(table, combinationIdsByTable(combinations).get(table.id) ?? []);
    },
    log,
    access.signal,
  );
}
