import { describe, expect, it } from 'vitest';
import { decideSeating } from '../../src/lib/availability/decide-seating.js';
import type { Seating } from '../../src/lib/availability/seatings.js';
import type { TableMove } from '../../src/lib/availability/table-optimiser.js';
import type { UnavailableReason } from '../../src/lib/availability/types.js';
import type { Evaluation, Timing } from '../../src/lib/availability/venue-day.js';

const timing: Timing = {
  shiftId: 's',
  minuteOfService: 1170,
  startsAt: 1,
  endsAt: 2,
  turnTimeMinutes: 90,
  overflowsShift: false,
  turnTimeSource: 'configured',
};
const seating = { kind: 'table', id: 't1', tableIds: ['t1'] } as unknown as Seating;
const move = { reservationId: 'r1' } as unknown as TableMove;
const refused = (reason: UnavailableReason, withTiming = true): Evaluation => ({
  available: false,
  reason,
  ...(withTiming ? { timing } : {}),
});

describe('decideSeating', () => {
  it.each<[string, Evaluation, boolean, ReturnType<typeof decideSeating>]>([
    [
      'available: seat at the seatings after the moves',
      { available: true, timing, seatings: [seating], moves: [move] },
      false,
      { kind: 'seat', timing, seatings: [seating], moves: [move] },
    ],
    [
      'available and forced: still seated',
      { available: true, timing, seatings: [seating], moves: [] },
      true,
      { kind: 'seat', timing, seatings: [seating], moves: [] },
    ],
    ['no table, not forced: refused', refused('no_table'), false, { kind: 'refuse', reason: 'no_table' }],
    ['no table, forced: booked without a table', refused('no_table'), true, { kind: 'force', timing }],
    ['pacing full, forced: booked without a table', refused('pacing_full'), true, { kind: 'force', timing }],
    ['closed, forced: refused (the time is not bookable)', refused('closed'), true, { kind: 'refuse', reason: 'closed' }],
    ['after the last seating, forced: refused', refused('after_last_seating'), true, { kind: 'refuse', reason: 'after_last_seating' }],
    ['a blocked table, forced: refused', refused('table_blocked'), true, { kind: 'refuse', reason: 'table_blocked' }],
    ['no table and no timing, forced: refused', refused('no_table', false), true, { kind: 'refuse', reason: 'no_table' }],
  ])('%s', (_name, evaluation, force, decision) => {
    expect(decideSeating(evaluation, force)).toEqual(decision);
  });
});
