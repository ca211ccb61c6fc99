import { describe, expect, it } from 'vitest';
import { diffReservation } from '../../src/lib/reservation-changes.js';

const base = {
  status: 'created',
  serviceDate: '2026-12-01',
  time: '19:00',
  partySize: 2,
  notes: null,
  table: null,
  guestId: null,
  externalRef: null,
  needsAttention: false,
  tableAssigned: false,
  updatedAt: 'x',
};
const table = (id: string) => ({ tableId: id, tableCombinationId: null, tables: [{ id, name: id, minSeats: 1, maxSeats: 4 }] });

describe('diffReservation', () => {
  it.each([
    [
      'first version: every non-null field, from null',
      null,
      base,
      {
        status: { from: null, to: 'created' },
        serviceDate: { from: null, to: '2026-12-01' },
        time: { from: null, to: '19:00' },
        partySize: { from: null, to: 2 },
        needsAttention: { from: null, to: false },
        tableAssigned: { from: null, to: false },
      },
    ],
    ['nothing tracked changed (updatedAt is not tracked)', base, { ...base, updatedAt: 'y' }, {}],
    ['status', base, { ...base, status: 'confirmed' }, { status: { from: 'created', to: 'confirmed' } }],
    [
      'time and party size',
      base,
      { ...base, time: '20:30', partySize: 4 },
      { time: { from: '19:00', to: '20:30' }, partySize: { from: 2, to: 4 } },
    ],
    [
      'a table is an object compared by value',
      { ...base, table: table('a') },
      { ...base, table: { tables: [{ maxSeats: 4, minSeats: 1, name: 'a', id: 'a' }], tableCombinationId: null, tableId: 'a' } },
      {},
    ],
    ['table moved', { ...base, table: table('a') }, { ...base, table: table('b') }, { table: { from: table('a'), to: table('b') } }],
    ['a missing field counts as null', { ...base, externalRef: undefined }, { ...base, externalRef: null }, {}],
  ])('%s', (_name, previous, current, expected) => {
    expect(diffReservation(previous as never, current)).toEqual(expected);
  });
});
