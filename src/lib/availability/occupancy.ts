import type { Booking, ReservationStatus } from './types.js';

/** Statuses whose reservation holds its tables; released, completed, no_show and cancelled free them. */
export const tableHoldingStatuses: ReadonlySet<ReservationStatus> = new Set(['created', 'confirmed', 'arrived', 'seated']);

/** A slot hold past its expiry: it occupies nothing and counts for nothing, swept or not. */
export function isLapsedHold(b: Booking, now: number): boolean {
  return b.expiresAt !== undefined && b.expiresAt <= now;
}

interface Interval {
  start: number;
  end: number;
  reservationId: string;
}

/** Which tables are taken when: intervals [start, end) per table. */
export class Occupancy {
  private readonly byTable = new Map<string, Interval[]>();

  /**
   * A seated party still at the table after its endsAt keeps the table until it is released or
   * completed (docs/reservations.md): nobody knows when it will leave, so the table stays taken from its
   * start onwards.
   */
  constructor(bookings: readonly Booking[], now: number) {
    for (const b of bookings) {
      if (!b.tableIds.length || !tableHoldingStatuses.has(b.status) || isLapsedHold(b, now)) continue;
      const end = b.status === 'seated' && b.endsAt <= now ? Number.POSITIVE_INFINITY : b.endsAt;
      for (const tableId of b.tableIds) {
        let list = this.byTable.get(tableId);
        if (!list) this.byTable.set(tableId, (list = []));
        list.push({ start: b.startsAt, end, reservationId: b.id });
      }
    }
  }

  /** No table of the list is taken over [start, end), ignoring the reservation being changed. */
  isFree(tableIds: readonly string[], start: number, end: number, ignoreReservationId?: string): boolean {
    for (const tableId of tableIds) {
      const list = this.byTable.get(tableId);
      if (!list) continue;
      for (const i of list) {
        if (i.start < end && start < i.end && i.reservationId !== ignoreReservationId) return false;
      }
    }
    return true;
  }

  /**
   * Per table of the list, the idle time a party over [start, end) would leave right before it and
   * right after it on that table: up to the nearest interval on each side, Infinity when there is none.
   */
  gapsAround(tableIds: readonly string[], start: number, end: number, ignoreReservationId?: string): number[] {
    const gaps: number[] = [];
    for (const tableId of tableIds) {
      let before = Number.POSITIVE_INFINITY;
      let after = Number.POSITIVE_INFINITY;
      for (const i of this.byTable.get(tableId) ?? []) {
        if (i.reservationId === ignoreReservationId) continue;
        if (i.end <= start) before = Math.min(before, start - i.end);
        if (i.start >= end) after = Math.min(after, i.start - end);
      }
      gaps.push(before, after);
    }
    return gaps;
  }
}
