import { describe, expect, it } from 'vitest';
import {
  DemandForecast,
  defaultDemandCurve,
  learnDemandCurve,
  remainingDemand,
  type DemandCurve,
  type DemandHistoryRow,
  type ExpectedSpan,
} from '../../src/lib/availability/demand-curve.js';
import type { FloorTable } from '../../src/lib/availability/types.js';

/** A curve as nested plain objects: what the cases below compare. */
const plain = (curve: DemandCurve) =>
  Object.fromEntries([...curve.partiesBySize].map(([size, byTime]) => [size, Object.fromEntries(byTime)]));

describe('learnDemandCurve: parties per night by party size and time', () => {
  it.each<[string, DemandHistoryRow[], number, Record<number, Record<string, number>>]>([
    ['no history: the default curve', [], 0, {}],
    ['rows without nights: the default curve', [{ partySize: 2, time: '19:00', count: 3 }], 0, {}],
    ['one night', [{ partySize: 2, time: '19:00', count: 3 }], 1, { 2: { '19:00': 3 } }],
    [
      'averaged over the nights that had reservations',
      [
        { partySize: 2, time: '19:00', count: 6 },
        { partySize: 2, time: '20:00', count: 1 },
        { partySize: 6, time: '20:00', count: 2 },
      ],
      4,
      { 2: { '19:00': 1.5, '20:00': 0.25 }, 6: { '20:00': 0.5 } },
    ],
    [
      'the same size and time twice add up',
      [
        { partySize: 4, time: '19:30', count: 1 },
        { partySize: 4, time: '19:30', count: 3 },
      ],
      2,
      { 4: { '19:30': 2 } },
    ],
  ])('%s', (_name, rows, nights, expected) => {
    expect(plain(learnDemandCurve(rows, nights))).toEqual(expected);
  });

  it('gives the default curve, which expects nothing, to a venue without history', () => {
    expect(learnDemandCurve([], 0)).toBe(defaultDemandCurve);
    expect(remainingDemand(defaultDemandCurve, [])).toEqual([]);
  });
});

describe('remainingDemand: the curve less what is booked', () => {
  const curve = learnDemandCurve(
    [
      { partySize: 4, time: '20:00', count: 2 },
      { partySize: 2, time: '20:00', count: 3 },
      { partySize: 2, time: '19:00', count: 1 },
    ],
    1,
  );
  it.each<[string, { partySize: number; time: string }[], [number, string, number][]]>([
    [
      'nothing booked: the whole curve, by size then time',
      [],
      [
        [2, '19:00', 1],
        [2, '20:00', 3],
        [4, '20:00', 2],
      ],
    ],
    [
      'a booking takes one party of its size and time',
      [{ partySize: 2, time: '20:00' }],
      [
        [2, '19:00', 1],
        [2, '20:00', 2],
        [4, '20:00', 2],
      ],
    ],
    [
      'more booked than expected: none left, never below zero',
      [
        { partySize: 2, time: '19:00' },
        { partySize: 2, time: '19:00' },
      ],
      [
        [2, '20:00', 3],
        [4, '20:00', 2],
      ],
    ],
    [
      'a size or time the curve does not know changes nothing',
      [
        { partySize: 3, time: '20:00' },
        { partySize: 2, time: '21:00' },
      ],
      [
        [2, '19:00', 1],
        [2, '20:00', 3],
        [4, '20:00', 2],
      ],
    ],
  ])('%s', (_name, booked, expected) => {
    const remaining = remainingDemand(curve, booked).map((e) => [e.partySize, e.time, e.parties]);
    expect(remaining).toEqual(expected);
    // The order of the bookings changes nothing.
    expect(remainingDemand(curve, [...booked].reverse()).map((e) => [e.partySize, e.time, e.parties])).toEqual(expected);
  });
});

describe('DemandForecast.demandOn: what a seating takes from the parties still expected', () => {
  const table = (id: string, minSeats: number, maxSeats: number, isBlocked = false): FloorTable => ({
    id,
    name: id,
    areaId: 'A',
    areaPosition: 0,
    minSeats,
    maxSeats,
    isBlocked,
  });
  // Two two-tops, two four-tops (one blocked), one six-top.
  const tables = [table('D1', 1, 2), table('D2', 1, 2), table('F1', 2, 4), table('F2', 2, 4, true), table('S1', 4, 6)];
  const hour = 3_600_000;
  const span = (partySize: number, from: number, to: number, parties: number): ExpectedSpan => ({
    partySize,
    startsAt: from * hour,
    endsAt: to * hour,
    parties,
  });
  const spans = [span(2, 19, 20.5, 3), span(4, 20, 22, 2), span(6, 21, 23, 1)];
  const forecast = new DemandForecast(spans, tables);

  it.each<[string, string[], number, number, number]>([
    // Couples fit D1, D2 and F1 (F2 is blocked): 3 parties spread over 3 tables.
    ['a two-top over the couples', ['D1'], 19, 20.5, 1],
    ['a two-top after the couples have left', ['D1'], 20.5, 22, 0],
    // F1 seats couples (1 each of 3) and fours (2 over F1 and S1: 1).
    ['a four-top over couples and fours', ['F1'], 20, 21.5, 2],
    // S1 seats fours (1) and sixes (1 over S1 alone).
    ['the six-top over fours and sixes', ['S1'], 20, 22, 2],
    ['the six-top before anyone is expected', ['S1'], 17, 19, 0],
    ['a combination adds up its tables', ['D1', 'D2'], 19, 20.5, 2],
    ['a table the floor does not have weighs nothing', ['X9'], 19, 23, 0],
  ])('%s', (_name, tableIds, from, to, expected) => {
    expect(forecast.demandOn(tableIds, from * hour, to * hour)).toBeCloseTo(expected, 10);
  });

  it('is empty without spans', () => {
    expect(new DemandForecast([], tables).isEmpty).toBe(true);
    expect(forecast.isEmpty).toBe(false);
  });
});
