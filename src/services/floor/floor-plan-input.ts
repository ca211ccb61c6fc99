import { ApiError } from '../../core/errors.js';

/**
 * The body of a new or replaced floor plan. `id` is optional on every item: an id of an item of
 * the same plan keeps that item; any other id is the client's name for a new item, which
 * tables (`areaId`) and combinations (`tableIds`) of the same body use to refer to it.
 */
export interface AreaInput {
  id?: string;
  name: string;
  icon?: string;
  position?: number;
  widthCm: number;
  heightCm: number;
}

export interface TableInput {
  id?: string;
  areaId: string;
  name: string;
  shape?: string;
  minSeats: number;
  maxSeats: number;
  positionXCm?: number;
  positionYCm?: number;
  widthCm?: number;
  heightCm?: number;
  rotationDegrees?: number;
  isBlocked?: boolean;
}

export interface CombinationInput {
  id?: string;
  tableIds: string[];
}

export interface FloorPlanContentsInput {
  areas: AreaInput[];
  tables: TableInput[];
  combinations: CombinationInput[];
}

interface Problem {
  fields: string[];
  message: string;
}

function duplicateIds(items: readonly { id?: string }[], collection: string): Problem[] {
  const seen = new Set<string>();
  for (const item of items) {
    if (item.id === undefined) continue;
    if (seen.has(item.id)) return [{ fields: [collection], message: `${collection} lists the id ${item.id} twice.` }];
    seen.add(item.id);
  }
  return [];
}

/**
 * The rules that tie the items of a body together (single-field formats are zod's): unique ids,
 * tables in an area of the body, combinations of at least two distinct tables of the body, all
 * of one area (docs/venue-configuration.md), and no two combinations of the same tables.
 */
export function checkFloorPlanContents(input: FloorPlanContentsInput): void {
  const problems: Problem[] = [
    ...duplicateIds(input.areas, 'areas'),
    ...duplicateIds(input.tables, 'tables'),
    ...duplicateIds(input.combinations, 'combinations'),
  ];
  const areaIds = new Set(input.areas.flatMap((a) => (a.id ? [a.id] : [])));
  const tableArea = new Map(input.tables.flatMap((t) => (t.id ? [[t.id, t.areaId] as const] : [])));

  input.tables.forEach((t, i) => {
    if (!areaIds.has(t.areaId))
      problems.push({ fields: ['tables', `tables.${i}.areaId`], message: `tables[${i}].areaId is not the id of an area of this body.` });
  });

  const combinationKeys = new Set<string>();
  input.combinations.forEach((c, i) => {
    const fields = ['combinations', `combinations.${i}.tableIds`];
    const distinct = new Set(c.tableIds);
    if (distinct.size !== c.tableIds.length || distinct.size < 2) {
      problems.push({ fields, message: `combinations[${i}] needs at least two distinct tables.` });
      return;
    }
    const unknown = c.tableIds.filter((id) => !tableArea.has(id));
    if (unknown.length) {
      problems.push({ fields, message: `combinations[${i}] names tables that are not in this body: ${unknown.join(', ')}.` });
      return;
    }
    if (new Set(c.tableIds.map((id) => tableArea.get(id))).size > 1) {
      problems.push({ fields, message: `combinations[${i}] joins tables of different areas; a combination stays within one area.` });
      return;
    }
    const key = [...distinct].sort().join(',');
    if (combinationKeys.has(key)) problems.push({ fields, message: `combinations[${i}] repeats the tables of another combination.` });
    combinationKeys.add(key);
  });

  if (problems.length) {
    throw ApiError.invalid([...new Set(problems.flatMap((p) => p.fields))], problems.map((p) => p.message).join(' '));
  }
}
