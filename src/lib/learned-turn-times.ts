/**
 * Learned turn times (docs/reservations.md "Turn times and wait quotes"), pure: how long the venue's
 * parties actually kept their tables, per party-size band, shift and ISO day of week, and what a
 * cell with too few samples borrows. No I/O: the service gives the durations and the configured rules.
 */

/** The party-size bands of the learned figures; `max` null: and larger. */
export const partySizeBands: ReadonlyArray<{ min: number; max: number | null }> = [
  { min: 1, max: 2 },
  { min: 3, max: 4 },
  { min: 5, max: 6 },
  { min: 7, max: null },
];

/** The history learned from: completed reservations of the last 8 weeks. */
export const LEARNING_WINDOW_DAYS = 56;
/** Below this many samples a cell borrows from its neighbours. */
export const MIN_SAMPLES = 12;
/** The learned p50 the engine uses is kept inside these bounds, in minutes. */
export const LEARNED_MIN_MINUTES = 30;
export const LEARNED_MAX_MINUTES = 300;

export type Borrowed = null | 'all_days' | 'party_size' | 'configured';

export interface TurnTimeSample {
  shiftId: string;
  dayOfWeek: number;
  partySize: number;
  minutes: number;
}

export interface Summary {
  samples: number;
  p50: number;
  p80: number;
}

/** The figures of the three levels a cell may take its values from; the keys are from statsKey. */
export interface TurnTimeStats {
  cells: Record<string, Summary>;
  allDays: Record<string, Summary>;
  sizes: Record<string, Summary>;
}

export interface LearnedCell {
  partySizeMin: number;
  partySizeMax: number | null;
  shiftId: string;
  dayOfWeek: number;
  samples: number;
  p50Minutes: number | null;
  p80Minutes: number | null;
  borrowed: Borrowed;
}

/** The index in partySizeBands of a party size. */
export function bandOf(partySize: number): number {
  const i = partySizeBands.findIndex((b) => partySize >= b.min && (b.max === null || partySize <= b.max));
  return i < 0 ? 0 : i;
}

/**
 * The p-th percentile (0..1) of ascending values, interpolated between the two nearest ranks (as
 * PostgreSQL's percentile_cont), rounded to the minute. Empty: NaN.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (!sorted.length) return NaN;
  const rank = p * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  return Math.round(sorted[low] + (sorted[high] - sorted[low]) * (rank - low));
}

function summarise(values: number[]): Summary {
  values.sort((a, b) => a - b);
  return { samples: values.length, p50: percentile(values, 0.5), p80: percentile(values, 0.8) };
}

const cellKey = (shiftId: string, dayOfWeek: number, band: number) => `${shiftId}|${dayOfWeek}|${band}`;
const allDaysKey = (shiftId: string, band: number) => `${shiftId}|${band}`;

/** The figures of every level from the durations of the window (samples of no shift count for their band alone). */
export function summariseTurnTimes(samples: readonly TurnTimeSample[]): TurnTimeStats {
  const groups = { cells: new Map<string, number[]>(), allDays: new Map<string, number[]>(), sizes: new Map<string, number[]>() };
  const add = (map: Map<string, number[]>, key: string, minutes: number) => {
    const list = map.get(key);
    if (list) list.push(minutes);
    else map.set(key, [minutes]);
  };
  for (const s of samples) {
    if (!(s.minutes > 0)) continue;
    const band = bandOf(s.partySize);
    add(groups.sizes, String(band), s.minutes);
    if (!s.shiftId) continue;
    add(groups.cells, cellKey(s.shiftId, s.dayOfWeek, band), s.minutes);
    add(groups.allDays, allDaysKey(s.shiftId, band), s.minutes);
  }
  const out = (map: Map<string, number[]>) => Object.fromEntries([...map].map(([k, v]) => [k, summarise(v)]));
  return { cells: out(groups.cells), allDays: out(groups.allDays), sizes: out(groups.sizes) };
}

/**
 * Every cell of the venue's shifts (each band, each day the shift runs): its own figures when it has
 * MIN_SAMPLES, else the same band and shift over all days, else the band alone, else the configured
 * rule (`configuredMinutes`, null when no rule covers the band's smallest party). `samples` is always
 * the cell's own count.
 */
export function resolveLearnedCells(
  stats: TurnTimeStats | null,
  shifts: ReadonlyArray<{ id: string; daysOfWeek: readonly number[] }>,
  configuredMinutes: (shiftId: string, partySize: number) => number | null,
): LearnedCell[] {
  const cells: LearnedCell[] = [];
  for (const shift of shifts) {
    for (const dayOfWeek of [...shift.daysOfWeek].sort((a, b) => a - b)) {
      partySizeBands.forEach((band, i) => {
        const own = stats?.cells[cellKey(shift.id, dayOfWeek, i)];
        const candidates: Array<[Borrowed, Summary | undefined]> = [
          [null, own],
          ['all_days', stats?.allDays[allDaysKey(shift.id, i)]],
          ['party_size', stats?.sizes[String(i)]],
        ];
        const found = candidates.find(([, s]) => s !== undefined && s.samples >= MIN_SAMPLES);
        const base = { partySizeMin: band.min, partySizeMax: band.max, shiftId: shift.id, dayOfWeek, samples: own?.samples ?? 0 };
        if (found) {
          cells.push({ ...base, p50Minutes: found[1]!.p50, p80Minutes: found[1]!.p80, borrowed: found[0] });
        } else {
          const minutes = configuredMinutes(shift.id, band.min);
          cells.push({ ...base, p50Minutes: minutes, p80Minutes: minutes, borrowed: 'configured' });
        }
      });
    }
  }
  return cells;
}

/** The turn time the engine uses for a learned p50: never below 30 nor above 300 minutes. */
export function clampLearnedMinutes(p50: number): number {
  return Math.min(LEARNED_MAX_MINUTES, Math.max(LEARNED_MIN_MINUTES, p50));
}

/**
 * The learned turn time of a party, from the resolved cells (p50 and p80, each kept within 30..300
 * minutes): null when its cell falls back to the configured rule (or the venue has no such cell), so
 * that the rule decides.
 */
export function learnedMinutesOf(
  cells: ReadonlyMap<string, LearnedCell>,
  shiftId: string,
  dayOfWeek: number,
  partySize: number,
): { p50: number; p80: number } | null {
  const cell = cells.get(cellKey(shiftId, dayOfWeek, bandOf(partySize)));
  if (!cell || cell.borrowed === 'configured' || cell.p50Minutes === null) return null;
  return { p50: clampLearnedMinutes(cell.p50Minutes), p80: clampLearnedMinutes(cell.p80Minutes ?? cell.p50Minutes) };
}

/** The resolved cells keyed for learnedMinutesOf. */
export function indexLearnedCells(cells: readonly LearnedCell[]): Map<string, LearnedCell> {
  return new Map(cells.map((c) => [cellKey(c.shiftId, c.dayOfWeek, bandOf(c.partySizeMin)), c]));
}
