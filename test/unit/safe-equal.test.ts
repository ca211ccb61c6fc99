import { describe, expect, it } from 'vitest';
import { safeEqual } from '../../src/lib/safe-equal.js';

describe('safeEqual', () => {
  it.each([
    ['secret', 'secret', true],
    ['secret', 'secreT', false],
    ['', '', true],
    ['s', 'secret', false],
    ['secret-and-more', 'secret', false],
  ])('%j vs %j → %s', (a, b, expected) => {
    expect(safeEqual(a, b)).toBe(expected);
  });
});
