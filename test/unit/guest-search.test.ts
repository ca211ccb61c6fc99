import { describe, expect, it } from 'vitest';
import { parseGuestSearch } from '../../src/lib/guest-search.js';

describe('parseGuestSearch', () => {
  it.each([
    ['jose', ['jose']],
    ['  José   García ', ['José', 'García']],
    ['maria maria', ['maria']],
    ['+39 06-1234', ['39', '061234']],
    ['(06) 1234', ['06', '1234']],
    ['50%_off\\', ['50\\%\\_off\\\\']],
    ['a-b', ['a-b']],
    ['abc', ['abc']],
  ])('%j → %j', (text, words) => {
    expect(parseGuestSearch(text)).toEqual(words);
  });

  it.each([['ab'], ['  ab  '], ['x'.repeat(201)], ['a b c d e f g h i']])('refuses %j', (text) => {
    expect(parseGuestSearch(text)).toBeNull();
  });

  it('accepts 200 characters and 8 words', () => {
    expect(parseGuestSearch('x'.repeat(200))).toHaveLength(1);
    expect(parseGuestSearch('a b c d e f g h')).toHaveLength(8);
  });
});
