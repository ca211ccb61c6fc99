/**
 * Pure shift arithmetic: where a venue-local (serviceDate, time) falls among the shifts and
 * closures of a venue. No I/O; the shapes are plain objects so DB rows can be passed as they are.
 *
 * Minutes are counted from the serviceDate's midnight. A shift whose endTime is earlier than
 * its startTime runs past midnight (docs/venue-configuration.md): its times after midnight still belong to
 * the serviceDate it started on, so they are counted as 1440 + minutes.
 */

export interface ShiftSchedule {
  id: string;
  /** ISO days, 1 = Monday … 7 = Sunday. */
  daysOfWeek: readonly number[];
  /** HH:mm, venue local time. */
  startTime: string;
  lastSeatingTime: string;
  endTime: string;
  /** YYYY-MM-DD, inclusive; null = open-ended. */
  validFrom: string | null;
  validTo: string | null;
  isActive: boolean;
}

export interface ClosureSchedule {
  /** YYYY-MM-DD, inclusive range. */
  from: string;
  to: string;
  /** Empty: the whole day is closed. */
  shiftIds: readonly string[];
}

export interface ShiftWindow {
  start: number;
  lastSeating: number;
  end: number;
}

export type ServiceTimeOutcome = 'closed' | 'no_shift' | 'after_last_seating' | 'open';

export interface ServiceTimeResolution<S extends ShiftSchedule = ShiftSchedule> {
  outcome: ServiceTimeOutcome;
  /** The shift that contains the time; absent for `no_shift` and for a whole-day closure. */
  shift?: S;
  /** Minutes from the serviceDate's midnight; 1440 + m when the time is a shift's after-midnight part. */
  minuteOfService: number;
}

export interface GridTime {
  time: string;
  minuteOfService: number;
}

export const MINUTES_PER_DAY = 1440;

export function minutesOf(hhmm: string): number {
  const match = /^(\d{2}):(\d{2})$/.exec(hhmm);
  if (!match) throw new RangeError(`not an HH:mm time: ${hhmm}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

/** HH:mm of a minute of service; minutes past midnight wrap to the next day's clock. */
export function formatMinutes(minuteOfService: number): string {
  const m = ((minuteOfService % MINUTES_PER_DAY) + MINUTES_PER_DAY) % MINUTES_PER_DAY;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/**
 * The shift's window in minutes of its serviceDate. lastSeating and end earlier than start are
 * after midnight; an end equal to start is a full 24 hours (writes refuse it, see venue-config).
 */
export function shiftWindow(shift: Pick<ShiftSchedule, 'startTime' | 'lastSeatingTime' | 'endTime'>): ShiftWindow {
  const start = minutesOf(shift.startTime);
  const afterStart = (m: number, orEqual: boolean) => (m < start || (orEqual && m === start) ? m + MINUTES_PER_DAY : m);
  return {
    start,
    lastSeating: afterStart(minutesOf(shift.lastSeatingTime), false),
    end: afterStart(minutesOf(shift.endTime), true),
  };
}

/** 1 = Monday … 7 = Sunday of a YYYY-MM-DD date (calendar arithmetic, no timezone involved). */
export function isoDayOfWeek(serviceDate: string): number {
  const day = new Date(`${serviceDate}T00:00:00Z`).getUTCDay();
  if (Number.isNaN(day)) throw new RangeError(`not a YYYY-MM-DD date: ${serviceDate}`);
  return day === 0 ? 7 : day;
}

/** Active shifts scheduled on that date: its day of week and inside validFrom … validTo. */
export function shiftsOn<S extends ShiftSchedule>(shifts: readonly S[], serviceDate: string): S[] {
  const day = isoDayOfWeek(serviceDate);
  return shifts.filter(
    (s) =>
      s.isActive &&
      s.daysOfWeek.includes(day) &&
      (s.validFrom === null || s.validFrom <= serviceDate) &&
      (s.validTo === null || serviceDate <= s.validTo),
  );
}

/**
 * Whether two shifts may both apply to one serviceDate and cover a common clock time, which
 * the no-overlap write rule forbids. Windows are half-open [start, end) so back-to-back shifts
 * (lunch until 15:00, afternoon from 15:00) are allowed. The comparison also shifts one window
 * by a day, so a past-midnight tail (19:00–01:00) collides with an early shift (00:00–02:00) of
 * the same day: that keeps every clock time of a serviceDate in at most one shift.
 */
export function overlappingShifts(a: ShiftSchedule, b: ShiftSchedule): boolean {
  if (!a.daysOfWeek.some((d) => b.daysOfWeek.includes(d))) return false;
  if (a.validFrom !== null && b.validTo !== null && a.validFrom > b.validTo) return false;
  if (b.validFrom !== null && a.validTo !== null && b.validFrom > a.validTo) return false;
  const wa = shiftWindow(a);
  const wb = shiftWindow(b);
  return [-MINUTES_PER_DAY, 0, MINUTES_PER_DAY].some((offset) => wa.start < wb.end + offset && wb.start + offset < wa.end);
}

function closuresOn(closures: readonly ClosureSchedule[], serviceDate: string): ClosureSchedule[] {
  return closures.filter((c) => c.from <= serviceDate && serviceDate <= c.to);
}

const outcomeRank: Record<ServiceTimeOutcome, number> = { open: 0, after_last_seating: 1, closed: 2, no_shift: 3 };

/**
 * Resolves a venue-local (serviceDate, time) in the order of docs/reservations.md:
 * closed → no_shift → after_last_seating → open.
 *
 * The clock time is tried as minute m of the serviceDate and as 1440 + m (the after-midnight part
 * of a shift of that same serviceDate): serviceDate 2026-12-05 at 00:30 with a dinner 19:00–01:00
 * is that dinner's 00:30, i.e. the night from the 5th to the 6th. It never reaches back to the
 * previous serviceDate's shift; ask with that previous date for it. A shift contains [start, end];
 * at the shared boundary of back-to-back shifts the one where the time can still be seated wins.
 */
export function resolveServiceTime<S extends ShiftSchedule>(
  shifts: readonly S[],
  closures: readonly ClosureSchedule[],
  serviceDate: string,
  time: string,
): ServiceTimeResolution<S> {
  const clock = minutesOf(time);
  const dayClosures = closuresOn(closures, serviceDate);
  if (dayClosures.some((c) => c.shiftIds.length === 0)) return { outcome: 'closed', minuteOfService: clock };

  let best: ServiceTimeResolution<S> = { outcome: 'no_shift', minuteOfService: clock };
  for (const shift of shiftsOn(shifts, serviceDate)) {
    const window = shiftWindow(shift);
    for (const minute of [clock, clock + MINUTES_PER_DAY]) {
      if (minute < window.start || minute > window.end) continue;
      const outcome: ServiceTimeOutcome = dayClosures.some((c) => c.shiftIds.includes(shift.id))
        ? 'closed'
        : minute > window.lastSeating
          ? 'after_last_seating'
          : 'open';
      if (outcomeRank[outcome] < outcomeRank[best.outcome]) best = { outcome, shift, minuteOfService: minute };
    }
  }
  return best;
}

/** The slot grid of a shift: start + k × interval, up to lastSeating included. */
export function gridTimes(
  shift: Pick<ShiftSchedule, 'startTime' | 'lastSeatingTime' | 'endTime'>,
  slotIntervalMinutes: number,
): GridTime[] {
  if (!Number.isInteger(slotIntervalMinutes) || slotIntervalMinutes <= 0) {
    throw new RangeError(`slot interval must be a positive integer: ${slotIntervalMinutes}`);
  }
  const window = shiftWindow(shift);
  const grid: GridTime[] = [];
  for (let minute = window.start; minute <= window.lastSeating; minute += slotIntervalMinutes) {
    grid.push({ time: formatMinutes(minute), minuteOfService: minute });
  }
  return grid;
}
