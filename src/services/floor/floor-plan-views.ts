import { and, asc, eq, inArray, isNull } from 'drizzle-orm';
import { z } from 'zod';
import type { DbOrTx } from '../../db/client.js';
import { areas, floorPlans, floorTables, tableCombinations } from '../../db/schema/index.js';
import { component, count, instant, uuid } from '../../core/response-schemas.js';

export type FloorPlanRow = typeof floorPlans.$inferSelect;
export type AreaRow = typeof areas.$inferSelect;
export type FloorTableRow = typeof floorTables.$inferSelect;
export type CombinationRow = typeof tableCombinations.$inferSelect;

export interface PlanContents {
  areas: AreaRow[];
  tables: FloorTableRow[];
  combinations: CombinationRow[];
}

const cm = z.number().int();
const shape = z.string().describe('`square` and other lowercase shape names');

export const floorPlanSchema = component(
  'FloorPlan',
  z.object({
    id: uuid,
    name: z.string(),
    isActive: z.boolean(),
    version: z.number().int(),
    updatedAt: instant,
    areas: z.array(z.object({ id: uuid, name: z.string(), widthCm: cm, heightCm: cm })),
    tables: z.array(
      z.object({
        id: uuid,
        areaId: uuid,
        name: z.string(),
        shape,
        minSeats: count,
        maxSeats: count,
        positionXCm: cm,
        positionYCm: cm,
        widthCm: cm,
        heightCm: cm,
        rotationDegrees: z.number().int(),
        isBlocked: z.boolean(),
      }),
    ),
    combinations: z.array(z.object({ id: uuid, tableIds: z.array(uuid) })),
  }),
  'A floor plan with its areas, tables and combinations (docs/api.md).',
);

export const tableSchema = component(
  'Table',
  z.object({
    id: uuid,
    floorPlanId: uuid,
    areaId: uuid,
    name: z.string(),
    shape,
    minSeats: count,
    maxSeats: count,
    isBlocked: z.boolean(),
    combinationIds: z.array(uuid),
    updatedAt: instant,
  }),
  'A table of the active floor plan (docs/api.md).',
);

export const areaSchema = component(
  'Area',
  z.object({ id: uuid, name: z.string(), icon: z.string(), position: z.number().int(), widthCm: cm, heightCm: cm, updatedAt: instant }),
  'An area (room) of the active floor plan (docs/api.md).',
);

/** docs/api.md Floor plan, exactly. */
export function floorPlanJson(plan: FloorPlanRow, contents: PlanContents): z.output<typeof floorPlanSchema> {
  return {
    id: plan.id,
    name: plan.name,
    isActive: plan.isActive,
    version: plan.version,
    updatedAt: plan.updatedAt.toISOString(),
    areas: contents.areas.map((a) => ({ id: a.id, name: a.name, widthCm: a.widthCm, heightCm: a.heightCm })),
    tables: contents.tables.map((t) => ({
      id: t.id,
      areaId: t.areaId,
      name: t.name,
      shape: t.shape,
      minSeats: t.minSeats,
      maxSeats: t.maxSeats,
      positionXCm: t.positionXCm,
      positionYCm: t.positionYCm,
      widthCm: t.widthCm,
      heightCm: t.heightCm,
      rotationDegrees: t.rotationDegrees,
      isBlocked: t.isBlocked,
    })),
    combinations: contents.combinations.map((c) => ({ id: c.id, tableIds: c.tableIds })),
  };
}

/** docs/api.md Table (list item), exactly. */
export function tableJson(t: FloorTableRow, combinationIds: string[]): z.output<typeof tableSchema> {
  return {
    id: t.id,
    floorPlanId: t.floorPlanId,
    areaId: t.areaId,
    name: t.name,
    shape: t.shape,
    minSeats: t.minSeats,
    maxSeats: t.maxSeats,
    isBlocked: t.isBlocked,
    combinationIds,
    updatedAt: t.updatedAt.toISOString(),
  };
}

/** docs/api.md Area (list item), exactly. */
export function areaJson(a: AreaRow): z.output<typeof areaSchema> {
  return {
    id: a.id,
    name: a.name,
    icon: a.icon,
    position: a.position,
    widthCm: a.widthCm,
    heightCm: a.heightCm,
    updatedAt: a.updatedAt.toISOString(),
  };
}

/** The live combinations each table belongs to. */
export function combinationIdsByTable(combinations: readonly CombinationRow[]): Map<string, string[]> {
  const byTable = new Map<string, string[]>();
  for (const c of combinations) for (const tableId of c.tableIds) byTable.set(tableId, [...(byTable.get(tableId) ?? []), c.id]);
  return byTable;
}

/**
 * The live (not deleted) areas, tables and combinations of some plans, in their natural order:
 * areas by position then name, tables by area position then name, combinations as created.
 */
export async function loadPlanContents(conn: DbOrTx, planIds: readonly string[]): Promise<Map<string, PlanContents>> {
  const contents = new Map<string, PlanContents>(planIds.map((id) => [id, { areas: [], tables: [], combinations: [] }]));
  if (planIds.length === 0) return contents;
  const ids = [...planIds];
  const [areaRows, tableRows, combinationRows] = await Promise.all([
    conn
      .select()
      .from(areas)
      .where(and(inArray(areas.floorPlanId, ids), isNull(areas.deletedAt)))
      .orderBy(asc(areas.position), asc(areas.name), asc(areas.id)),
    conn
      .select({ table: floorTables })
      .from(floorTables)
      .innerJoin(areas, eq(areas.id, floorTables.areaId))
      .where(and(inArray(floorTables.floorPlanId, ids), isNull(floorTables.deletedAt)))
      .orderBy(asc(areas.position), asc(floorTables.name), asc(floorTables.id)),
    conn
      .select()
      .from(tableCombinations)
      .where(and(inArray(tableCombinations.floorPlanId, ids), isNull(tableCombinations.deletedAt)))
      .orderBy(asc(tableCombinations.createdAt), asc(tableCombinations.id)),
  ]);
  for (const a of areaRows) contents.get(a.floorPlanId)!.areas.push(a);
  for (const { table } of tableRows) contents.get(table.floorPlanId)!.tables.push(table);
  for (const c of combinationRows) contents.get(c.floorPlanId)!.combinations.push(c);
  return contents;
}

export async function floorPlanView(conn: DbOrTx, plan: FloorPlanRow) {
  const contents = await loadPlanContents(conn, [plan.id]);
  return floorPlanJson(plan, contents.get(plan.id)!);
}
