import { MINUTES_PER_DAY, minutesOf, type ShiftWindow } from '../shift-schedule.js';
import type { Booking, PacingRule } from './types.js';

/** Minute of service of a booking's time within a shift window (after-midnight times count as 1440 + m). */
function minuteInShift(time: string, window: ShiftWindow): number {
  const clock = minutesOf(time);
  return clock < window.start ? clock + MINUTES_PER_DAY : clock;
}

/**
 * decisions §4: windows are aligned blocks of windowMinutes counted from the shift's start. A party
 * at `minuteOfService` is refused when the covers of the serviceDate's bookings starting in its
 * block (every status but cancelled and no_show), plus the party, exceed maxCovers. Every enabled
 * rule of the shift applies. `bookings` are those of the same serviceDate, without the one being changed.
 */
export function isPacingFull(
  rules: readonly PacingRule[],
  window: ShiftWindow,
  minuteOfService: number,
  partySize: number,
  bookings: readonly Booking[],
): boolean {
  for (const rule of rules) {
    if (!rule.isEnabled || rule.windowMinutes <= 0) continue;
    const blockStart = window.start + Math.floor((minuteOfService - window.start) / rule.windowMinutes) * rule.windowMinutes;
    const blockEnd = blockStart + rule.windowMinutes;
    let covers = partySize;
    for (const b of bookings) {
      if (b.status === 'cancelled' || b.status === 'no_show') continue;
      const m = minuteInShift(b.time, window);
      if (m >= blockStart && m < blockEnd) covers += b.partySize;
    }
    if (covers > rule.maxCovers) return true;
  }
  return false;
}
