import { db } from '../../src/db/client.js';
import {
  areas,
  closures,
  floorPlans,
  floorTables,
  pacingRules,
  shifts,
  tableCombinations,
  turnTimeRules,
} from '../../src/db/schema/index.js';
import { addDays, instantToLocal } from '../../src/lib/local-time.js';

export interface ShiftFixture {
  name: string;
  startTime: string;
  lastSeatingTime: string;
  endTime: string;
  daysOfWeek?: number[];
}

export interface TableFixture {
  name: string;
  minSeats: number;
  maxSeats: number;
  area?: string;
  isBlocked?: boolean;
}

export interface VenueFixtureOptions {
  shifts?: ShiftFixture[];
  /** Venue-wide turn times. */
  turnTimes?: { minPartySize: number; maxPartySize: number; durationMinutes: number }[];
  /** Pacing rules of the first shift. */
  pacing?: { maxCovers: number; windowMinutes: number }[];
  tables?: TableFixture[];
  /** Combinations by table names. */
  combinations?: string[][];
  closures?: { from: string; to: string }[];
}

export interface VenueFixture {
  planId: string;
  shiftIds: string[];
  tableIds: Record<string, string>;
  combinationIds: string[];
}

const everyDay = [1, 2, 3, 4, 5, 6, 7];

/**
 * Configures a venue by writing its rows directly (shifts, rules, an active floor plan with areas,
 * tables and combinations). Defaults: dinner 18:00–23:30 every day (last seating 22:00),
 * 90 minutes for 1–4, 120 for 5–12, tables T2 (1–2), T4 (2–4), T6 (4–6), no pacing.
 */
export async function configureVenue(venueId: string, options: VenueFixtureOptions = {}): Promise<VenueFixture> {
  const shiftRows = await db()
    .insert(shifts)
    .values(
      (options.shifts ?? [{ name: 'Dinner', startTime: '18:00', lastSeatingTime: '22:00', endTime: '23:30' }]).map((s) => ({
        venueId,
        name: s.name,
        startTime: s.startTime,
        lastSeatingTime: s.lastSeatingTime,
        endTime: s.endTime,
        daysOfWeek: s.daysOfWeek ?? everyDay,
      })),
    )
    .returning();
  await db()
    .insert(turnTimeRules)
    .values(
      (
        options.turnTimes ?? [
          { minPartySize: 1, maxPartySize: 4, durationMinutes: 90 },
          { minPartySize: 5, maxPartySize: 12, durationMinutes: 120 },
        ]
      ).map((r) => ({ venueId, ...r })),
    );
  if (options.pacing?.length)
    await db()
      .insert(pacingRules)
      .values(options.pacing.map((p) => ({ venueId, shiftId: shiftRows[0].id, ...p })));
  if (options.closures?.length)
    await db()
      .insert(closures)
      .values(options.closures.map((c) => ({ venueId, ...c })));

  const [plan] = await db().insert(floorPlans).values({ venueId, name: 'Main', isActive: true }).returning();
  const tables = options.tables ?? [
    { name: 'T2', minSeats: 1, maxSeats: 2 },
    { name: 'T4', minSeats: 2, maxSeats: 4 },
    { name: 'T6', minSeats: 4, maxSeats: 6 },
  ];
  const areaNames = [...new Set(tables.map((t) => t.area ?? 'Room'))];
  const areaRows = await db()
    .insert(areas)
    .values(areaNames.map((name, position) => ({ venueId, floorPlanId: plan.id, name, position, widthCm: 1000, heightCm: 800 })))
    .returning();
  const areaId = new Map(areaRows.map((a) => [a.name, a.id]));
  const tableRows = await db()
    .insert(floorTables)
    .values(
      tables.map((t) => ({
        venueId,
        floorPlanId: plan.id,
        areaId: areaId.get(t.area ?? 'Room')!,
        name: t.name,
        minSeats: t.minSeats,
        maxSeats: t.maxSeats,
        isBlocked: t.isBlocked ?? false,
      })),
    )
    .returning();
  const tableIds = Object.fromEntries(tableRows.map((t) => [t.name, t.id]));
  const combinationRows = options.combinations?.length
    ? await db()
        .insert(tableCombinations)
        .values(options.combinations.map((names) => ({ venueId, floorPlanId: plan.id, tableIds: names.map((n) => tableIds[n]) })))
        .returning()
    : [];
  return { planId: plan.id, shiftIds: shiftRows.map((s) => s.id), tableIds, combinationIds: combinationRows.map((c) => c.id) };
}

/** A venue-local date `days` from today. */
export function localDate(days: number, zone = 'Europe/Rome'): string {
  return addDays(instantToLocal(zone, Date.now()).date, days);
}
