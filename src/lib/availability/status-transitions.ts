import { reservationEventTypes, type ReservationEventType } from '../event-catalogue.js';
import type { ReservationStatus } from './types.js';

/** docs/reservations.md: the status moves PATCH may make; anything else is an invalid_transition. */
const allowedMoves: Record<ReservationStatus, readonly ReservationStatus[]> = {
  created: ['confirmed', 'arrived', 'seated', 'no_show'],
  confirmed: ['arrived', 'seated', 'no_show'],
  arrived: ['seated'],
  seated: ['released', 'completed'],
  released: ['completed'],
  // A late guest after all.
  no_show: ['arrived', 'seated'],
  completed: [],
  cancelled: [],
};

/** DELETE cancels from these; an already cancelled reservation answers unchanged. */
const cancellable: ReadonlySet<ReservationStatus> = new Set(['created', 'confirmed', 'arrived']);

/** Statuses that only floor staff set (docs/api.md: they need floor:write besides reservations:write). */
export const floorStatuses: ReadonlySet<ReservationStatus> = new Set(['arrived', 'seated', 'released', 'completed', 'no_show']);

export function canMove(from: ReservationStatus, to: ReservationStatus): boolean {
  return allowedMoves[from].includes(to);
}

export function canCancel(from: ReservationStatus): boolean {
  return cancellable.has(from);
}

/** The events of one status move (docs/reservations.md). table_released: tables freed from a seated party. */
export function statusEvents(from: ReservationStatus, to: ReservationStatus): ReservationEventType[] {
  if (from === to) return [];
  switch (to) {
    case 'confirmed':
      return ['reservation_confirmed'];
    case 'arrived':
      return ['guest_arrived'];
    case 'seated':
      return ['guest_seated'];
    case 'released':
      return ['table_released'];
    case 'completed':
      return from === 'seated' ? ['table_released', 'meal_completed'] : ['meal_completed'];
    case 'no_show':
      return ['reservation_no_show'];
    case 'cancelled':
      return ['reservation_cancelled'];
    case 'created':
      return [];
  }
}

/** Puts the events of one change in catalogue order, without duplicates. */
export function orderEvents(types: Iterable<ReservationEventType>): ReservationEventType[] {
  const set = new Set(types);
  return reservationEventTypes.filter((t) => set.has(t));
}
