import { describe, expect, it } from 'vitest';
import { Occupancy } from '../../src/lib/availability/occupancy.js';
import { orderedSeatings } from '../../src/lib/availability/seatings.js';
import type { Booking, FloorTable } from '../../src/lib/availability/types.js';
import { findCompatibleEntry } from '../../src/lib/waitlist-match.js';

const table = (id: string, minSeats: number, maxSeats: number, isBlocked = false): FloorTable => ({
  id,
  name: id,
  areaId: 'a',
  areaPosition: 0,
  minSeats,
  maxSeats,
  isBlocked,
});
const tables = [table('t2', 1, 2), table('t4', 2, 4), table('t4b', 2, 4), table('t6', 4, 6, true)];
const seatings = orderedSeatings({ tables, combinations: [{ id: 'c8', tableIds: ['t4', 't4b'] }] });

const start = Date.UTC(2026, 5, 1, 19, 0);
const min = 60_000;
const booking = (id: string, tableIds: string[], from: number, to: number): Booking => ({
  id,
  serviceDate: '2026-06-01',
  time: '19:00',
  partySize: 2,
  status: 'confirmed',
  startsAt: from,
  endsAt: to,
  tableIds,
});
const turnTime = (size: number) => (size <= 4 ? 90 : size <= 8 ? 120 : undefined);

function match(queue: { id: string; partySize: number }[], freedTableIds: string[], bookings: Booking[] = []) {
  const result = findCompatibleEntry({
    queue,
    seatings,
    freedTableIds,
    occupancy: new Occupancy(bookings, start),
    start,
    turnTimeMinutes: turnTime,
  });
  return result && { entry: result.entry.id, seating: result.seating.id };
}

describe('findCompatibleEntry', () => {
  it.each([
    [
      'the first entry in queue order that fits the freed table',
      [
        { id: 'e1', partySize: 4 },
        { id: 'e2', partySize: 3 },
      ],
      ['t4'],
      { entry: 'e1', seating: 't4' },
    ],
    [
      'skips a party too large for the freed table',
      [
        { id: 'e1', partySize: 6 },
        { id: 'e2', partySize: 2 },
      ],
      ['t2'],
      { entry: 'e2', seating: 't2' },
    ],
    ['skips a party below the table minimum', [{ id: 'e1', partySize: 1 }], ['t4'], null],
    ['a combination the freed table completes', [{ id: 'e1', partySize: 7 }], ['t4'], { entry: 'e1', seating: 'c8' }],
    ['never a blocked table', [{ id: 'e1', partySize: 5 }], ['t6'], null],
    [
      'passes over a party without a turn-time rule',
      [
        { id: 'e1', partySize: 20 },
        { id: 'e2', partySize: 2 },
      ],
      ['t2'],
      { entry: 'e2', seating: 't2' },
    ],
    ['nothing when the queue is empty', [], ['t2'], null],
  ])('%s', (_name, queue, freed, expected) => {
    expect(match(queue, freed)).toEqual(expected);
  });

  it('needs the table free for the whole turn time from the start', () => {
    const queue = [{ id: 'e1', partySize: 2 }];
    // t2 is taken again 60 minutes from now: too short for a 90-minute turn; an hour and a half later is fine.
    expect(match(queue, ['t2'], [booking('r1', ['t2'], start + 60 * min, start + 150 * min)])).toBeNull();
    expect(match(queue, ['t2'], [booking('r1', ['t2'], start + 90 * min, start + 180 * min)])).toEqual({ entry: 'e1', seating: 't2' });
  });

  it('a combination needs its other table free too', () => {
    const queue = [{ id: 'e1', partySize: 7 }];
    expect(match(queue, ['t4'], [booking('r1', ['t4b'], start - 30 * min, start + 60 * min)])).toBeNull();
  });
});
