import { describe, expect, it } from 'vitest';
import { encodeBase62, generateKey, hashKey, isWellFormedKey, prefixForKey } from '../../src/lib/api-key-format.js';

describe('API key format (docs/api.md "Keys, limits")', () => {
  it.each([
    ['live', false, 'gsk_'],
    ['test', true, 'gsk_test_'],
    ['publishable', false, 'gspk_'],
    ['publishable', true, 'gspk_test_'],
  ] as const)('%s key of a test org=%s starts with %s and is well formed', (kind, testOrg, prefix) => {
    const key = generateKey(prefixForKey(kind, testOrg));
    expect(key.startsWith(prefix)).toBe(true);
    expect(key.length).toBe(prefix.length + 43);
    expect(isWellFormedKey(key)).toBe(true);
  });

  it.each([
    ['', false],
    ['gsk_short', false],
    [`gsk_${'a'.repeat(42)}`, false],
    [`gsk_${'a'.repeat(44)}`, false],
    [`gsk_${'a'.repeat(42)}-`, false],
    [`sk_${'a'.repeat(43)}`, false],
    [`gsk_${'a'.repeat(43)}`, true],
    [`gspk_test_${'Z9'.repeat(21)}z`, true],
  ])('isWellFormedKey(%s) = %s', (key, expected) => {
    expect(isWellFormedKey(key)).toBe(expected);
  });

  it('base62 keeps 43 characters even for small numbers', () => {
    expect(encodeBase62(Buffer.alloc(32))).toBe('0'.repeat(43));
    expect(encodeBase62(Buffer.alloc(32, 0xff))).toHaveLength(43);
  });

  it('hashes are stable SHA-256 hex', () => {
    expect(hashKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
