import { describe, expect, it } from 'vitest';
import { parseTrustProxy } from '../../src/lib/trust-proxy.js';

describe('parseTrustProxy (TRUST_PROXY)', () => {
  it.each([
    ['', false],
    ['false', false],
    ['0', false],
    ['true', 1],
    ['yes', 1],
    ['2', 2],
    ['10.0.0.1', ['10.0.0.1']],
    ['loopback, 10.0.0.0/8', ['loopback', '10.0.0.0/8']],
    ['fd00::/8,uniquelocal', ['fd00::/8', 'uniquelocal']],
  ])('%j → %j', (value, expected) => {
    expect(parseTrustProxy(value)).toEqual(expected);
  });

  it.each(['11', 'everyone', '10.0.0.0/33', '10.0.0.1/8/1', '::1/129', '*'])('%j is refused with a message', (value) => {
    expect(typeof parseTrustProxy(value)).toBe('string');
  });
});
