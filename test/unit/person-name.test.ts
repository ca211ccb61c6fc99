import { describe, expect, it } from 'vitest';
import { splitPersonName } from '../../src/lib/person-name.js';

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
