import { MINUTES_PER_DAY, type ShiftWindow } from '../shift-schedule.js';
import type { Booking, PacingRule } from './types.js';

/**
 * Minute of service of a booking's time within a shift window (after-midnight times count as
 * 1440 + m). Stored times are well-formed HH:mm, so they are read without a regular expression:
 * this runs for every reservation of the day on every availability request.
 */
function minuteInShift(time: string, window: ShiftWindow): number {
  const clock =
    (time.charCodeAt(0) - 48) * 600 + (time.charCodeAt(1) - 48) * 60 + (time.charCodeAt(3) - 48) * 10 + (time.charCodeAt(4) - 48);
  return clock < window.start ? clock + MINUTES_PER_DAY : clock;
}

/** docs/venue-configuration.md: windows are aligned blocks of windowMinutes counted from the shift's start. */
export function blockStartOf(rule: PacingRule, window: ShiftWindow, minuteOfService: number): number {
  return window.start + Math.floor((minuteOfService - window.start) / rule.windowMinutes) * rule.windowMinutes;
}

/** Bookings that count for pacing: every status but cancelled and no_show. */
export function countsForPacing(b: Booking): boolean {
  return b.status !== 'cancelled' && b.status !== 'no_show';
}

/** The block a booking starts in, or null when it does not start within the shift. */
export function blockOfBooking(rule: PacingRule, window: ShiftWindow, b: Booking): number | null {
  const m = minuteInShift(b.time, window);
  return m < window.start || m > window.end ? null : blockStartOf(rule, window, m);
}

/**
 * The covers starting in each block of a rule, keyed by the block's start minute, over the
 * bookings of one serviceDate. A party at minute t is refused with pacing_full when the covers of
 * t's block plus the party exceed maxCovers (every enabled rule of the shift applies).
 */
export function coversByBlock(rule: PacingRule, window: ShiftWindow, bookings: readonly Booking[]): Map<number, number> {
  const covers = new Map<number, number>();
  for (const b of bookings) {
    if (!countsForPacing(b)) continue;
    const block = blockOfBooking(rule, window, b);
    if (block !== null) covers.set(block, (covers.get(block) ?? 0) + b.partySize);
  }
  return covers;
}
