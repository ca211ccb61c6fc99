import { describe, expect, it } from 'vitest';
import type { VenueConfig } from '../../src/lib/availability/types.js';
import { resolveTurnTime } from '../../src/lib/availability/venue-day.js';
import {
  bandOf,
  clampLearnedMinutes,
  indexLearnedCells,
  learnedMinutesOf,
  percentile,
  resolveLearnedCells,
  summariseTurnTimes,
  type TurnTimeSample,
} from '../../src/lib/learned-turn-times.js';

const repeat = (n: number, sample: Omit<TurnTimeSample, 'minutes'>, minutes: (i: number) => number): TurnTimeSample[] =>
  Array.from({ length: n }, (_, i) => ({ ...sample, minutes: minutes(i) }));

describe('percentile: interpolated between the nearest ranks, rounded to the minute', () => {
  it.each<[number[], number, number]>([
    [[90], 0.5, 90],
    [[60, 90], 0.5, 75],
    [[60, 70, 80, 90, 100], 0.5, 80],
    [[60, 70, 80, 90, 100], 0.8, 92],
    [[10, 20, 30, 40], 0.5, 25],
    [[10, 20, 30, 40], 0.8, 34],
    [[], 0.5, NaN],
  ])('%j at %d → %d', (values, p, expected) => {
    expect(percentile(values, p)).toBe(expected);
  });
});

describe('bandOf: the party-size bands 1–2, 3–4, 5–6, 7+', () => {
  it.each([
    [1, 0],
    [2, 0],
    [3, 1],
    [4, 1],
    [5, 2],
    [6, 2],
    [7, 3],
    [40, 3],
  ])('%d → band %d', (size, band) => expect(bandOf(size)).toBe(band));
});

describe('clampLearnedMinutes: 30..300', () => {
  it.each([
    [5, 30],
    [30, 30],
    [95, 95],
    [300, 300],
    [420, 300],
  ])('%d → %d', (p50, expected) => expect(clampLearnedMinutes(p50)).toBe(expected));
});

const dinner = { id: 'dinner', daysOfWeek: [5, 1] };
const rule = (_shiftId: string, size: number) => (size <= 2 ? 90 : size <= 4 ? 105 : null);

describe('resolveLearnedCells: own figures from 12 samples, else all days, else the band, else the rule', () => {
  const cases: Array<[string, TurnTimeSample[], { dayOfWeek: number; band: number }, Record<string, unknown>]> = [
    [
      'nothing learned: the configured rule, its duration as both figures',
      [],
      { dayOfWeek: 5, band: 0 },
      { samples: 0, p50Minutes: 90, p80Minutes: 90, borrowed: 'configured' },
    ],
    [
      'no rule covers the band: null figures',
      [],
      { dayOfWeek: 5, band: 3 },
      { samples: 0, p50Minutes: null, p80Minutes: null, borrowed: 'configured' },
    ],
    [
      '12 samples of its own: its own figures',
      repeat(12, { shiftId: 'dinner', dayOfWeek: 5, partySize: 2 }, (i) => 60 + i * 5),
      { dayOfWeek: 5, band: 0 },
      { samples: 12, p50Minutes: 88, p80Minutes: 104, borrowed: null },
    ],
    [
      '11 of its own and 6 on Monday: the same band and shift on all days',
      [
        ...repeat(11, { shiftId: 'dinner', dayOfWeek: 5, partySize: 2 }, () => 100),
        ...repeat(6, { shiftId: 'dinner', dayOfWeek: 1, partySize: 1 }, () => 50),
      ],
      { dayOfWeek: 5, band: 0 },
      { samples: 11, p50Minutes: 100, p80Minutes: 100, borrowed: 'all_days' },
    ],
    [
      'too few in the shift, enough of the band in another shift and without one: the band alone',
      [
        ...repeat(3, { shiftId: 'dinner', dayOfWeek: 5, partySize: 4 }, () => 120),
        ...repeat(5, { shiftId: 'lunch', dayOfWeek: 2, partySize: 3 }, () => 70),
        ...repeat(5, { shiftId: '', dayOfWeek: 3, partySize: 4 }, () => 80),
      ],
      { dayOfWeek: 5, band: 1 },
      { samples: 3, p50Minutes: 80, p80Minutes: 104, borrowed: 'party_size' },
    ],
    [
      '11 in all: the configured rule stands',
      repeat(11, { shiftId: 'dinner', dayOfWeek: 5, partySize: 3 }, () => 40),
      { dayOfWeek: 5, band: 1 },
      { samples: 11, p50Minutes: 105, p80Minutes: 105, borrowed: 'configured' },
    ],
    [
      'non-positive durations are not samples',
      repeat(12, { shiftId: 'dinner', dayOfWeek: 5, partySize: 2 }, (i) => (i === 0 ? 0 : 70)),
      { dayOfWeek: 5, band: 0 },
      { samples: 11, borrowed: 'configured' },
    ],
  ];
  it.each(cases)('%s', (_name, samples, at, expected) => {
    const cells = resolveLearnedCells(summariseTurnTimes(samples), [dinner], rule);
    const cell = cells.find((c) => c.dayOfWeek === at.dayOfWeek && bandOf(c.partySizeMin) === at.band);
    expect(cell).toMatchObject(expected);
  });

  it('lists every band of every day the shift runs, days in ISO order', () => {
    const cells = resolveLearnedCells(null, [dinner], rule);
    expect(cells.map((c) => [c.dayOfWeek, c.partySizeMin, c.partySizeMax])).toEqual([
      [1, 1, 2],
      [1, 3, 4],
      [1, 5, 6],
      [1, 7, null],
      [5, 1, 2],
      [5, 3, 4],
      [5, 5, 6],
      [5, 7, null],
    ]);
  });
});

describe('learnedMinutesOf: the p50 the engine uses, or null where the rule decides', () => {
  const samples = [
    ...repeat(12, { shiftId: 'dinner', dayOfWeek: 5, partySize: 2 }, () => 20),
    ...repeat(12, { shiftId: 'dinner', dayOfWeek: 1, partySize: 4 }, () => 130),
  ];
  const cells = indexLearnedCells(resolveLearnedCells(summariseTurnTimes(samples), [dinner], rule));
  it.each<[string, string, number, number, { p50: number; p80: number } | null]>([
    ['a learned p50 below 30 is clamped', 'dinner', 5, 2, { p50: 30, p80: 30 }],
    ['a learned cell', 'dinner', 1, 3, { p50: 130, p80: 130 }],
    ['borrowed from all days', 'dinner', 5, 4, { p50: 130, p80: 130 }],
    ['a cell on the rules', 'dinner', 5, 7, null],
    ['an unknown shift', 'lunch', 5, 2, null],
    ['a day the shift does not run', 'dinner', 3, 2, null],
  ])('%s', (_name, shiftId, day, size, expected) => {
    expect(learnedMinutesOf(cells, shiftId, day, size)).toEqual(expected);
  });
});

describe('resolveTurnTime: the venue source decides, a cell on the rules keeps the rule', () => {
  const config = (turnTimeSource: 'configured' | 'learned'): VenueConfig => ({
    venue: {
      timezone: 'UTC',
      slotIntervalMinutes: 15,
      bookingHorizonDays: 90,
      minNoticeMinutes: 0,
      tableOptimisation: false,
      turnTimeSource,
    },
    shifts: [
      {
        id: 'dinner',
        daysOfWeek: [5],
        startTime: '18:00',
        lastSeatingTime: '22:00',
        endTime: '23:30',
        validFrom: null,
        validTo: null,
        isActive: true,
      },
    ],
    closures: [],
    turnTimeRules: [{ id: 'r', shiftId: null, minPartySize: 1, maxPartySize: 8, durationMinutes: 90 }],
    learnedTurnTimes: summariseTurnTimes(repeat(12, { shiftId: 'dinner', dayOfWeek: 5, partySize: 2 }, () => 70)),
    pacingRules: [],
    tables: [],
    combinations: [],
  });
  // 2026-11-27 is a Friday (ISO 5), 2026-11-26 a Thursday.
  it.each<[string, 'configured' | 'learned', string, number, ReturnType<typeof resolveTurnTime>]>([
    ['configured: the rule', 'configured', '2026-11-27', 2, { minutes: 90, source: 'configured' }],
    ['learned: the p50 of the cell', 'learned', '2026-11-27', 2, { minutes: 70, source: 'learned', p80Minutes: 70 }],
    ['learned, a band without samples: the rule', 'learned', '2026-11-27', 4, { minutes: 90, source: 'configured' }],
    ['learned, a day the shift does not run: the rule', 'learned', '2026-11-26', 2, { minutes: 90, source: 'configured' }],
  ])('%s', (_name, source, serviceDate, size, expected) => {
    expect(resolveTurnTime(config(source), 'dinner', serviceDate, size)).toEqual(expected);
  });
});
