import { describe, expect, it } from 'vitest';
import { isSameGuestName, splitPersonName } from '../../src/lib/person-name.js';

describe('splitPersonName', () => {
  it.each([
    ['Mario Rossi', 'Mario', 'Rossi'],
    ['  Anna   Maria  De Luca ', 'Anna', 'Maria De Luca'],
    ['Cher', 'Cher', null],
    ['', null, null],
    ['   ', null, null],
    [null, null, null],
    [undefined, null, null],
  ])('splits %j into %j and %j', (name, firstName, lastName) => {
    expect(splitPersonName(name)).toEqual({ firstName, lastName });
  });
});

describe('isSameGuestName', () => {
  it.each([
    [{ firstName: 'Ada', lastName: 'Lovelace' }, { firstName: 'Ada', lastName: 'Lovelace' }, true],
    [{ firstName: 'Ada', lastName: 'Lovelace' }, { firstName: ' ada ', lastName: 'LOVELACE' }, true],
    [{ firstName: 'Zoë', lastName: "O'Brien  Jr." }, { firstName: 'ZOË', lastName: "o'brien jr." }, true],
    [{ firstName: 'Ada', lastName: 'Lovelace' }, { firstName: 'Mallory', lastName: 'Lovelace' }, false],
    [{ firstName: 'Ada', lastName: 'Lovelace' }, { firstName: 'Ada' }, false],
    [{ firstName: 'Ada', lastName: 'Lovelace' }, {}, false],
    [{ firstName: null, lastName: null }, {}, false],
    [{ firstName: null, lastName: null }, { firstName: null, lastName: null }, false],
    [{ firstName: 'Ada', lastName: null }, { firstName: 'Ada' }, true],
  ])('%j claimed as %j → %s', (guest, given, expected) => {
    expect(isSameGuestName(guest, given)).toBe(expected);
  });
});
