import { describe, expect, it } from 'vitest';
import { conditionsMatch, type AutomationConditions } from '../../src/lib/automation-conditions.js';

const any: AutomationConditions = { partySizeMin: null, partySizeMax: null, sources: null };
const reservation = (partySize: number, source = 'api') => ({ reservation: { id: 'r', partySize, source } });

describe('automation conditions', () => {
  it.each([
    { name: 'no condition, reservation', conditions: any, data: reservation(4), match: true },
    { name: 'no condition, guest event', conditions: any, data: { guest: { id: 'g' }, reason: 'guest_created' }, match: true },
    { name: 'min met', conditions: { ...any, partySizeMin: 4 }, data: reservation(4), match: true },
    { name: 'min missed', conditions: { ...any, partySizeMin: 5 }, data: reservation(4), match: false },
    { name: 'max met', conditions: { ...any, partySizeMax: 4 }, data: reservation(4), match: true },
    { name: 'max missed', conditions: { ...any, partySizeMax: 3 }, data: reservation(4), match: false },
    { name: 'inside a range', conditions: { ...any, partySizeMin: 2, partySizeMax: 6 }, data: reservation(6), match: true },
    { name: 'source listed', conditions: { ...any, sources: ['phone', 'api'] }, data: reservation(2, 'api'), match: true },
    { name: 'source not listed', conditions: { ...any, sources: ['phone'] }, data: reservation(2, 'api'), match: false },
    {
      name: 'all conditions met',
      conditions: { partySizeMin: 2, partySizeMax: 8, sources: ['walk_in'] },
      data: reservation(8, 'walk_in'),
      match: true,
    },
    {
      name: 'one of several conditions missed',
      conditions: { partySizeMin: 2, partySizeMax: 8, sources: ['walk_in'] },
      data: reservation(9, 'walk_in'),
      match: false,
    },
    { name: 'size condition on a guest event', conditions: { ...any, partySizeMin: 1 }, data: { guest: { id: 'g' } }, match: false },
    { name: 'source condition on a guest event', conditions: { ...any, sources: ['api'] }, data: { guest: { id: 'g' } }, match: false },
    {
      name: 'size condition on a waiting-list entry',
      conditions: { ...any, partySizeMin: 3 },
      data: { waitlistEntry: { partySize: 3 } },
      match: true,
    },
    {
      name: 'source condition on a waiting-list entry',
      conditions: { ...any, sources: ['api'] },
      data: { waitlistEntry: { partySize: 3 } },
      match: false,
    },
    { name: 'a null reservation', conditions: { ...any, partySizeMax: 3 }, data: { reservation: null }, match: false },
  ])('$name → $match', ({ conditions, data, match }) => {
    expect(conditionsMatch(conditions, data)).toBe(match);
  });
});
