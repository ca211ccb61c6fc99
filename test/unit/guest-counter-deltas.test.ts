import { describe, expect, it } from 'vitest';
import { guestCounterDeltas, type CountedStatus } from '../../src/lib/guest-counter-deltas.js';

const visit = { visitCount: 1, noShowCount: 0, cancelledCount: 0, visited: true };
const noShow = { visitCount: 0, noShowCount: 1, cancelledCount: 0, visited: false };
const cancel = { visitCount: 0, noShowCount: 0, cancelledCount: 1, visited: false };
const undoNoShow = { visitCount: 0, noShowCount: -1, cancelledCount: 0, visited: false };
const none = { visitCount: 0, noShowCount: 0, cancelledCount: 0, visited: false };

describe('guestCounterDeltas', () => {
  it.each<[CountedStatus | null, CountedStatus, typeof none]>([
    ['seated', 'completed', visit],
    ['released', 'completed', visit],
    [null, 'completed', visit],
    ['created', 'no_show', noShow],
    ['confirmed', 'no_show', noShow],
    ['created', 'cancelled', cancel],
    ['arrived', 'cancelled', cancel],
    ['no_show', 'arrived', undoNoShow],
    ['no_show', 'seated', undoNoShow],
    ['created', 'confirmed', none],
    ['confirmed', 'seated', none],
    ['seated', 'released', none],
    ['completed', 'completed', none],
    ['no_show', 'no_show', none],
    ['cancelled', 'cancelled', none],
    [null, 'created', none],
  ])('%s → %s', (from, to, expected) => {
    expect(guestCounterDeltas(from, to)).toEqual(expected);
  });
});
