import { describe, expect, it } from 'vitest';
import { canonicalJson, hashCanonical } from '../../src/lib/canonical-json.js';

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
});
