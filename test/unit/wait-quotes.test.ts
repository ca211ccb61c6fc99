import { describe, expect, it } from 'vitest';
import { estimateSeatTimes, expectedEnd, seatRange, type FloorNow, type SeatEstimate } from '../../src/lib/wait-quotes.js';

const MIN = 60_000;
const now = Date.parse('2026-11-27T19:00:00Z');
const at = (minutes: number) => now + minutes * MIN;

const two = (id: string) => ({ tableIds: [id], minSeats: 1, maxSeats: 2, isBlocked: false });
const four = (id: string) => ({ tableIds: [id], minSeats: 2, maxSeats: 4, isBlocked: false });

function floor(overrides: Partial<FloorNow> = {}): FloorNow {
  return {
    now,
    opensAt: at(-60),
    lastSeatingAt: at(180),
    seatings: [two('A'), two('B'), four('C')],
    seated: [],
    due: [],
    turnMinutes: (size) => (size <= 2 ? { p50: 90 } : size <= 4 ? { p50: 100 } : undefined),
    ...overrides,
  };
}

const waitOf = (e: SeatEstimate) => e.estimatedWaitMinutes;

describe('seatRange: 20 minutes or a third of the wait wide, never before now', () => {
  it.each<[number, number, number]>([
    [0, 0, 20],
    [10, 2, 22],
    [60, 52, 72],
    [90, 78, 108],
  ])('seat in %d min → %d..%d', (seatIn, from, to) => {
    expect(seatRange(now, at(seatIn))).toEqual({ from: at(from), to: at(to) });
  });
});

describe('expectedEnd: seatedAt + turn time, or shortly when past it', () => {
  it.each<[number, number, number]>([
    [-30, 90, 60],
    [-100, 90, 5],
    [0, 45, 45],
  ])('seated %d min ago for %d → ends in %d min', (seatedAgo, turn, endsIn) => {
    expect(expectedEnd(at(seatedAgo), turn, now)).toBe(at(endsIn));
  });
});

describe('estimateSeatTimes', () => {
  const cases: Array<[string, Partial<FloorNow>, number[], number[], Array<number | null>]> = [
    ['an empty floor seats at once', {}, [], [2, 4], [0, 0]],
    [
      'two-tops all seated until known times: the first of those times',
      {
        seated: [
          { tableIds: ['A'], partySize: 2, seatedAt: at(-50) },
          { tableIds: ['B'], partySize: 2, seatedAt: at(-70) },
          { tableIds: ['C'], partySize: 4, seatedAt: at(-10) },
        ],
      },
      [],
      [2],
      [20],
    ],
    [
      'a party ahead takes the first free two-top: the next one is the second',
      {
        seated: [
          { tableIds: ['A'], partySize: 2, seatedAt: at(-50) },
          { tableIds: ['B'], partySize: 2, seatedAt: at(-70) },
          { tableIds: ['C'], partySize: 4, seatedAt: at(-10) },
        ],
      },
      [2],
      [2],
      [40],
    ],
    [
      'a table due for a reservation before the turn ends is not offered',
      { seatings: [two('A')], due: [{ tableIds: ['A'], partySize: 2, startsAt: at(30) }] },
      [],
      [2],
      [120],
    ],
    [
      'a reservation due late enough leaves the table to a walk-in',
      { seatings: [two('A')], due: [{ tableIds: ['A'], partySize: 2, startsAt: at(95) }] },
      [],
      [2],
      [0],
    ],
    [
      'past the last seating: no time',
      { seatings: [two('A')], seated: [{ tableIds: ['A'], partySize: 2, seatedAt: at(0) }], lastSeatingAt: at(60) },
      [],
      [2],
      [null],
    ],
    ['no seating fits the party: no time', {}, [], [8], [null]],
    ['before the shift opens: its start', { opensAt: at(45) }, [], [2], [45]],
    ['a blocked table is not offered', { seatings: [{ ...two('A'), isBlocked: true }, four('C')] }, [], [2], [0]],
  ];
  it.each(cases)('%s', (_name, overrides, queue, asking, expected) => {
    expect(estimateSeatTimes(floor(overrides), queue, asking).asking.map(waitOf)).toEqual(expected);
  });

  it('estimates a queue in its order: on one table each party after the one before, until the last seating', () => {
    const result = estimateSeatTimes(floor({ seatings: [two('A')], lastSeatingAt: at(150) }), [2, 2, 2]);
    expect(result.queue.map(waitOf)).toEqual([0, 90, null]);
    expect(result.queue[2]).toEqual({ estimatedSeatTime: null, estimatedWaitMinutes: null, reason: 'after_last_seating' });
  });

  it('asks each size on its own: the asked sizes do not take tables from one another', () => {
    const result = estimateSeatTimes(floor({ seatings: [two('A')] }), [], [2, 2]);
    expect(result.asking.map(waitOf)).toEqual([0, 0]);
  });
});
