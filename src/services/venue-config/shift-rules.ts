import { and, arrayContains, eq, inArray, ne, sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { closures, shifts } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { component, instant, localTime, serviceDate, uuid } from '../../core/response-schemas.js';
import { overlappingShifts, shiftWindow } from '../../lib/shift-schedule.js';
import type { RuleKind } from './venue-rules.js';

export type ShiftRow = typeof shifts.$inferSelect;

export interface ShiftFields {
  name: string;
  daysOfWeek: number[];
  startTime: string;
  lastSeatingTime: string;
  endTime: string;
  validFrom: string | null;
  validTo: string | null;
  isActive: boolean;
}

export const shiftSchema = component(
  'Shift',
  z.object({
    id: uuid,
    venueId: uuid,
    name: z.string(),
    daysOfWeek: z.array(z.number().int().min(1).max(7)).describe('ISO days, 1 = Monday'),
    startTime: localTime,
    lastSeatingTime: localTime,
    endTime: localTime.describe('Earlier than startTime: the shift runs past midnight.'),
    validFrom: serviceDate.nullable(),
    validTo: serviceDate.nullable(),
    isActive: z.boolean(),
    updatedAt: instant,
  }),
  'A shift of a venue (docs/venue-configuration.md).',
);

export function shiftJson(s: ShiftRow): z.output<typeof shiftSchema> {
  return {
    id: s.id,
    venueId: s.venueId,
    name: s.name,
    daysOfWeek: s.daysOfWeek,
    startTime: s.startTime,
    lastSeatingTime: s.lastSeatingTime,
    endTime: s.endTime,
    validFrom: s.validFrom,
    validTo: s.validTo,
    isActive: s.isActive,
    updatedAt: s.updatedAt.toISOString(),
  };
}

/** 400 naming `field` unless every id is a shift of the venue. */
export async function assertShiftsOfVenue(tx: Tx, venueId: string, shiftIds: readonly string[], field: string): Promise<void> {
  if (shiftIds.length === 0) return;
  const found = await tx
    .select({ id: shifts.id })
    .from(shifts)
    .where(and(eq(shifts.venueId, venueId), inArray(shifts.id, [...shiftIds])));
  if (found.length !== new Set(shiftIds).size) throw ApiError.invalid([field], `${field} must name shifts of this venue.`);
}

async function checkShift(tx: Tx, venueId: string, shift: ShiftFields, shiftId: string | null): Promise<void> {
  if (shift.validFrom !== null && shift.validTo !== null && shift.validFrom > shift.validTo) {
    throw ApiError.invalid(['validFrom', 'validTo'], 'validFrom must not be after validTo.');
  }
  if (shift.endTime === shift.startTime) throw ApiError.invalid(['endTime'], 'endTime must differ from startTime.');
  const window = shiftWindow(shift);
  if (window.lastSeating > window.end) {
    throw ApiError.invalid(
      ['lastSeatingTime'],
      'lastSeatingTime must lie between startTime and endTime (endTime before startTime runs past midnight).',
    );
  }
  // An inactive shift applies to no day; it is checked again when it is switched back on.
  if (!shift.isActive) return;
  const others = await tx
    .select()
    .from(shifts)
    .where(and(eq(shifts.venueId, venueId), eq(shifts.isActive, true), shiftId ? ne(shifts.id, shiftId) : undefined));
  const clash = others.find((other) => overlappingShifts({ ...shift, id: shiftId ?? '' }, other));
  if (clash) {
    throw ApiError.invalid(
      ['startTime', 'endTime'],
      `The shift overlaps the shift "${clash.name}" (${clash.startTime}–${clash.endTime}) on a common day.`,
      { conflictingShiftId: clash.id },
    );
  }
}

/**
 * A deleted shift leaves the closures that named it: a closure of that shift alone is removed
 * (an empty shiftIds would otherwise turn it into a whole-day closure).
 */
async function detachShiftFromClosures(tx: Tx, shift: ShiftRow): Promise<void> {
  await tx.delete(closures).where(and(eq(closures.venueId, shift.venueId), sql`${closures.shiftIds} = array[${shift.id}]::uuid[]`));
  await tx
    .update(closures)
    .set({ shiftIds: sql`array_remove(${closures.shiftIds}, ${shift.id}::uuid)`, updatedAt: nextUpdatedAt(closures.updatedAt) })
    .where(and(eq(closures.venueId, shift.venueId), arrayContains(closures.shiftIds, [shift.id])));
}

export const shiftKind: RuleKind<ShiftRow, ShiftFields> = {
  table: shifts,
  label: 'Shift',
  check: checkShift,
  beforeDelete: detachShiftFromClosures,
};
