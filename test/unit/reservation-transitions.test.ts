import { describe, expect, it } from 'vitest';
import { canCancel, canMove, orderEvents, statusEvents } from '../../src/lib/availability/status-transitions.js';
import { reservationStatuses, type ReservationStatus } from '../../src/lib/availability/types.js';

const allowed: Record<ReservationStatus, ReservationStatus[]> = {
  created: ['confirmed', 'arrived', 'seated', 'no_show'],
  confirmed: ['arrived', 'seated', 'no_show'],
  arrived: ['seated'],
  seated: ['released', 'completed'],
  released: ['completed'],
  no_show: ['arrived', 'seated'],
  completed: [],
  cancelled: [],
};

const everyPair = reservationStatuses.flatMap((from) => reservationStatuses.filter((to) => to !== from).map((to) => [from, to] as const));

describe('status moves of docs/reservations.md', () => {
  it.each(everyPair)('%s → %s', (from, to) => {
    expect(canMove(from, to)).toBe(allowed[from].includes(to));
  });

  it('never moves to created or cancelled by PATCH', () => {
    for (const from of reservationStatuses) {
      expect(canMove(from, 'created')).toBe(false);
      expect(canMove(from, 'cancelled')).toBe(false);
    }
  });

  it.each(reservationStatuses.map((s) => [s, ['created', 'confirmed', 'arrived'].includes(s)] as const))(
    'cancel from %s: %s',
    (from, expected) => {
      expect(canCancel(from)).toBe(expected);
    },
  );
});

describe('events of a status move', () => {
  it.each([
    ['created', 'confirmed', ['reservation_confirmed']],
    ['confirmed', 'arrived', ['guest_arrived']],
    ['arrived', 'seated', ['guest_seated']],
    ['created', 'seated', ['guest_seated']],
    ['seated', 'released', ['table_released']],
    ['seated', 'completed', ['table_released', 'meal_completed']],
    ['released', 'completed', ['meal_completed']],
    ['confirmed', 'no_show', ['reservation_no_show']],
    ['no_show', 'arrived', ['guest_arrived']],
    ['arrived', 'cancelled', ['reservation_cancelled']],
    ['confirmed', 'confirmed', []],
  ] as const)('%s → %s emits %j', (from, to, events) => {
    expect(statusEvents(from, to)).toEqual(events);
  });

  it('orders the events of one change as the catalogue does, once each', () => {
    expect(orderEvents(['reservation_needs_attention', 'reservation_modified', 'reservation_confirmed', 'reservation_modified'])).toEqual([
      'reservation_confirmed',
      'reservation_modified',
      'reservation_needs_attention',
    ]);
    expect(orderEvents(['meal_completed', 'table_released'])).toEqual(['table_released', 'meal_completed']);
  });
});
