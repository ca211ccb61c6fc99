import { canonicalJson } from './canonical-json.js';

/** The fields of a reservation that its history compares (docs/reservations.md "Reservation history"), in this order. */
export const historyFields = [
  'status',
  'serviceDate',
  'time',
  'partySize',
  'notes',
  'table',
  'guestId',
  'externalRef',
  'needsAttention',
  'tableAssigned',
] as const;
export type HistoryField = (typeof historyFields)[number];

export type ReservationChanges = Partial<Record<HistoryField, { from: unknown; to: unknown }>>;

/**
 * The fields that differ between two versions of a reservation (as events carry it). Without a
 * previous version (the first event) every field is compared with null, so the first entry lists
 * what the reservation started with. Missing fields count as null; values compare as canonical JSON
 * (the table is an object).
 */
export function diffReservation(previous: Record<string, unknown> | null, current: Record<string, unknown>): ReservationChanges {
  const changes: ReservationChanges = {};
  for (const field of historyFields) {
    const from = previous?.[field] ?? null;
    const to = current[field] ?? null;
    if (canonicalJson(from) !== canonicalJson(to)) changes[field] = { from, to };
  }
  return changes;
}
