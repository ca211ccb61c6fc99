/**
 * Venue-local wall time ↔ UTC instants with the platform's Intl time-zone data (no dependency).
 *
 * Local → instant follows docs/reservations.md (the "compatible" disambiguation of Temporal): a local time
 * that does not exist (DST gap) moves forward by the length of the gap; an ambiguous one (DST
 * overlap) takes the earlier instant.
 */

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(zone, f);
  }
  return f;
}

/**
 * Per zone, the offset of the whole second last read: a zone's offset changes only at a whole
 * second, so within that second it is exact. A request reads the same "now" several times (its
 * booking window, the walk-in's slot, each VenueDay: 62 of them for GET /availability/days), and
 * `formatToParts` costs about 4 µs and an array of thirteen objects at each call.
 */
const lastOffsets = new Map<string, { second: number; offsetMs: number }>();

/** The wall clock of the zone at an instant, as if it were UTC (epoch ms, milliseconds dropped). */
function wallClockMs(zone: string, epochMs: number): number {
  const second = Math.floor(epochMs / 1000);
  const last = lastOffsets.get(zone);
  if (last?.second === second) return second * 1000 + last.offsetMs;
  const parts = formatterFor(zone).formatToParts(new Date(epochMs));
  const get = (type: Intl.DateTimeFormatPartTypes) => Number(parts.find((p) => p.type === type)!.value);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  lastOffsets.set(zone, { second, offsetMs: wall - second * 1000 });
  return wall;
}

/** The zone's offset from UTC at an instant, in ms (local = utc + offset). */
export function zoneOffsetMs(zone: string, epochMs: number): number {
  const floored = Math.floor(epochMs / 1000) * 1000;
  return wallClockMs(zone, floored) - floored;
}

/** Epoch ms of YYYY-MM-DD 00:00 read as UTC: the "naive" axis local times are laid out on. */
export function naiveDayStartMs(date: string): number {
  const ms = Date.parse(`${date}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new RangeError(`not a YYYY-MM-DD date: ${date}`);
  return ms;
}

function instantOfNaive(zone: string, naive: number): number {
  // Real zones change their offset at most once within a day on either side of a wall time.
  const before = zoneOffsetMs(zone, naive - DAY_MS);
  const after = zoneOffsetMs(zone, naive + DAY_MS);
  let earliest = Number.POSITIVE_INFINITY;
  for (const offset of before === after ? [before] : [before, after]) {
    const candidate = naive - offset;
    if (zoneOffsetMs(zone, candidate) === offset && candidate < earliest) earliest = candidate;
  }
  // No offset maps back to this wall time: it is in a gap. Read with the offset in force before
  // the gap, it lands after the transition, i.e. the wall time moved forward by the gap.
  return Number.isFinite(earliest) ? earliest : naive - before;
}

/**
 * The instant of a venue-local date and minute. `minutes` may exceed 1440 (a past-midnight part of
 * a shift that belongs to the previous serviceDate): it then means that minute of the next day.
 */
export function localToInstant(zone: string, date: string, minutes: number): number {
  return instantOfNaive(zone, naiveDayStartMs(date) + minutes * MINUTE_MS);
}

export interface LocalDateTime {
  date: string;
  /** Minutes since local midnight, 0 … 1439. */
  minutes: number;
}

/** The venue-local date and minute of an instant. */
export function instantToLocal(zone: string, epochMs: number): LocalDateTime {
  const wall = wallClockMs(zone, epochMs);
  const date = new Date(wall).toISOString().slice(0, 10);
  return { date, minutes: Math.floor((wall - naiveDayStartMs(date)) / MINUTE_MS) };
}

/** YYYY-MM-DD plus a number of calendar days. */
export function addDays(date: string, days: number): string {
  return new Date(naiveDayStartMs(date) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Calendar days from one YYYY-MM-DD to another (negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  return Math.round((naiveDayStartMs(to) - naiveDayStartMs(from)) / DAY_MS);
}

/**
 * A converter for the minutes of one serviceDate (0 … 2879, past midnight included). When the
 * zone keeps one offset over the whole span, which is every day but the few around a DST change,
 * it is plain arithmetic; otherwise each minute goes through localToInstant.
 */
export function serviceDayClock(zone: string, serviceDate: string): (minuteOfService: number) => number {
  const key = `${zone} ${serviceDate}`;
  let clock = dayClocks.get(key);
  if (!clock) {
    // A pure function of its key: memoised, the few days in use at a time stay warm.
    if (dayClocks.size >= 4096) dayClocks.clear();
    dayClocks.set(key, (clock = buildDayClock(zone, serviceDate)));
  }
  return clock;
}

const dayClocks = new Map<string, (minuteOfService: number) => number>();

function buildDayClock(zone: string, serviceDate: string): (minuteOfService: number) => number {
  const naiveStart = naiveDayStartMs(serviceDate);
  const offsets = [-1, 0, 1, 2, 3].map((d) => zoneOffsetMs(zone, naiveStart + d * DAY_MS));
  if (offsets.every((o) => o === offsets[0])) {
    const offset = offsets[0];
    return (minute) => naiveStart + minute * MINUTE_MS - offset;
  }
  return (minute) => instantOfNaive(zone, naiveStart + minute * MINUTE_MS);
}
