import { randomUUID } from 'node:crypto';
import { createFloorPlan } from '../floor/floor-plan-writes.js';
import type { AreaInput, CombinationInput, TableInput } from '../floor/floor-plan-input.js';
import { pacingRuleKind } from './pacing-rules.js';
import { shiftKind } from './shift-rules.js';
import { turnTimeRuleKind } from './turn-time-rules.js';
import { createRule } from './venue-rules.js';
import type { VenueAccess } from './venue-lock.js';
import { systemActor } from '../outbox/outbox.js';

export interface DemoVenueSetup {
  floorPlanId: string;
  shiftIds: { lunch: string; dinner: string };
  tableIds: string[];
}

const everyDay = [1, 2, 3, 4, 5, 6, 7];
/** Seats of the n-th table of an area, repeating: mostly twos and fours, some larger tables. */
const seatPattern = [2, 2, 4, 4, 2, 4, 6, 8];
const minSeatsFor: Record<number, number> = { 2: 1, 4: 2, 6: 4, 8: 5 };
const turnTimes = [
  { minPartySize: 1, maxPartySize: 2, durationMinutes: 90 },
  { minPartySize: 3, maxPartySize: 4, durationMinutes: 105 },
  { minPartySize: 5, maxPartySize: 8, durationMinutes: 120 },
  { minPartySize: 9, maxPartySize: 16, durationMinutes: 150 },
];

function buildFloor(tableCount: number) {
  const areaSpecs = [
    { prefix: 'S', area: { id: randomUUID(), name: 'Sala', icon: 'room', position: 0, widthCm: 1400, heightCm: 1000 } },
    { prefix: 'T', area: { id: randomUUID(), name: 'Terrazza', icon: 'terrace', position: 1, widthCm: 1200, heightCm: 800 } },
  ];
  const areas: AreaInput[] = areaSpecs.map((s) => s.area);
  const tables: TableInput[] = [];
  const combinations: CombinationInput[] = [];
  areaSpecs.forEach(({ prefix, area }, areaIndex) => {
    const count = Math.ceil(tableCount / 2) - (areaIndex === 1 && tableCount % 2 === 1 ? 1 : 0);
    const ofArea: TableInput[] = [];
    for (let i = 0; i < count; i++) {
      const maxSeats = seatPattern[i % seatPattern.length];
      ofArea.push({
        id: randomUUID(),
        areaId: area.id,
        name: `${prefix}${i + 1}`,
        minSeats: minSeatsFor[maxSeats],
        maxSeats,
        positionXCm: 100 + (i % 6) * 200,
        positionYCm: 100 + Math.floor(i / 6) * 180,
        widthCm: maxSeats > 4 ? 160 : 80,
        heightCm: 80,
      });
    }
    tables.push(...ofArea);
    // Neighbouring small tables pushed together, and the two largest tables for big parties.
    const pairs = [
      [0, 1],
      [2, 3],
      [6, 7],
    ].filter(([, b]) => b < ofArea.length);
    for (const [a, b] of pairs) combinations.push({ tableIds: [ofArea[a].id!, ofArea[b].id!] });
  });
  return { areas, tables, combinations };
}

/**
 * Configures a venue as a realistic trattoria through the same services as the API: lunch
 * 12:00–15:00 (last seating 14:00) and dinner 19:00–23:30 (last seating 22:00) every day, turn
 * times by party size, 40 covers per 30 minutes at dinner, and an active floor plan of two areas
 * with `tableCount` tables of 2 to 8 seats (24 by default; benchmarks ask for more).
 */
export async function configureDemoVenue(
  organisationId: string,
  venueId: string,
  options: { tableCount?: number } = {},
): Promise<DemoVenueSetup> {
  const tableCount = options.tableCount ?? 24;
  if (!Number.isInteger(tableCount) || tableCount < 2) throw new RangeError(`a demo venue needs at least 2 tables, not ${tableCount}`);
  const access: VenueAccess = { organisationId, venueIds: null };
  const lunch = await createRule(shiftKind, access, venueId, {
    name: 'Pranzo',
    daysOfWeek: everyDay,
    startTime: '12:00',
    lastSeatingTime: '14:00',
    endTime: '15:00',
    validFrom: null,
    validTo: null,
    isActive: true,
  });
  const dinner = await createRule(shiftKind, access, venueId, {
    name: 'Cena',
    daysOfWeek: everyDay,
    startTime: '19:00',
    lastSeatingTime: '22:00',
    endTime: '23:30',
    validFrom: null,
    validTo: null,
    isActive: true,
  });
  for (const rule of turnTimes) await createRule(turnTimeRuleKind, access, venueId, { shiftId: null, ...rule });
  await createRule(pacingRuleKind, access, venueId, { shiftId: dinner.id, isEnabled: true, maxCovers: 40, windowMinutes: 30 });
  const plan = await createFloorPlan(access, systemActor('demo'), venueId, { name: 'Sala e terrazza', ...buildFloor(tableCount) });
  return { floorPlanId: plan.id, shiftIds: { lunch: lunch.id, dinner: dinner.id }, tableIds: plan.tables.map((t) => t.id) };
}
