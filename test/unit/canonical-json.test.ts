import { describe, expect, it } from 'vitest';
import { canonicalJson, hashCanonical, nestsDeeperThan } from '../../src/lib/canonical-json.js';

describe('canonical JSON', () => {
  it.each([
    [{ b: 1, a: 2 }, '{"a":2,"b":1}'],
    [{ a: { d: [3, { z: 1, y: 2 }], c: null } }, '{"a":{"c":null,"d":[3,{"y":2,"z":1}]}}'],
    [{ a: undefined, b: 1 }, '{"b":1}'],
    ['x', '"x"'],
    [undefined, 'null'],
  ])('%j → %s', (value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('equal bodies in any key order hash alike; different bodies do not', () => {
    expect(hashCanonical({ a: 1, b: [1, 2] })).toBe(hashCanonical({ b: [1, 2], a: 1 }));
    expect(hashCanonical({ a: 1 })).not.toBe(hashCanonical({ a: 2 }));
  });

  it.each([
    [{}, 0, true],
    ['x', 0, false],
    [{ a: [1] }, 2, false],
    [{ a: [[1]] }, 2, true],
    [{ a: 1, b: { c: { d: {} } } }, 3, true],
  ])('nestsDeeperThan(%j, %i) is %s', (value, max, expected) => {
    expect(nestsDeeperThan(value, max)).toBe(expected);
  });

  it('answers for a 100,000-deep value (no recursion)', () => {
    expect(nestsDeeperThan(JSON.parse(`${'['.repeat(100_000)}${']'.repeat(100_000)}`), 64)).toBe(true);
  });
});
