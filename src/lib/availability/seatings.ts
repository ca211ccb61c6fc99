import type { FloorTable, TableCombination, VenueConfig } from './types.js';

/** Something a party can be seated at: one table, or a combination occupying all its tables. */
export interface Seating {
  kind: 'table' | 'combination';
  id: string;
  tableIds: readonly string[];
  minSeats: number;
  maxSeats: number;
  isBlocked: boolean;
  areaPosition: number;
  /** The table's name, or the combination's table names joined with `+`. */
  name: string;
}

function combinationSeating(combination: TableCombination, tableById: ReadonlyMap<string, FloorTable>): Seating | null {
  const tables = combination.tableIds.map((id) => tableById.get(id));
  // A combination naming a table that is no longer in the active plan cannot seat anyone.
  if (tables.length === 0 || tables.some((t) => t === undefined)) return null;
  const present = tables as FloorTable[];
  return {
    kind: 'combination',
    id: combination.id,
    tableIds: present.map((t) => t.id),
    // docs/venue-configuration.md: a combination seats from the largest minSeats to the sum of maxSeats.
    minSeats: Math.max(...present.map((t) => t.minSeats)),
    maxSeats: present.reduce((sum, t) => sum + t.maxSeats, 0),
    isBlocked: present.some((t) => t.isBlocked),
    areaPosition: Math.min(...present.map((t) => t.areaPosition)),
    name: present.map((t) => t.name).join('+'),
  };
}

/**
 * Every seating of the floor in the choice order of docs/reservations.md: smallest maxSeats, then a single
 * table before a combination, then area position, then name (id last, so that it is total).
 */
export function orderedSeatings(config: Pick<VenueConfig, 'tables' | 'combinations'>): Seating[] {
  const tableById = new Map(config.tables.map((t) => [t.id, t]));
  const seatings: Seating[] = config.tables.map((t) => ({
    kind: 'table',
    id: t.id,
    tableIds: [t.id],
    minSeats: t.minSeats,
    maxSeats: t.maxSeats,
    isBlocked: t.isBlocked,
    areaPosition: t.areaPosition,
    name: t.name,
  }));
  for (const c of config.combinations) {
    const seating = combinationSeating(c, tableById);
    if (seating) seatings.push(seating);
  }
  return seatings.sort(
    (a, b) =>
      a.maxSeats - b.maxSeats ||
      (a.kind === b.kind ? 0 : a.kind === 'table' ? -1 : 1) ||
      a.areaPosition - b.areaPosition ||
      (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) ||
      (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
  );
}

export function fitsParty(seating: Seating, partySize: number): boolean {
  return seating.minSeats <= partySize && partySize <= seating.maxSeats;
}
