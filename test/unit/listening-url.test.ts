import { describe, expect, it } from 'vitest';
import { listeningUrl } from '../../src/lib/listening-url.js';

describe('listeningUrl', () => {
  it.each([
    [{ address: '127.0.0.1', family: 'IPv4', port: 9464 }, 'http://127.0.0.1:9464'],
    [{ address: '0.0.0.0', family: 'IPv4', port: 3000 }, 'http://0.0.0.0:3000'],
    [{ address: '::', family: 'IPv6', port: 3000 }, 'http://[::]:3000'],
    [{ address: '::1', family: 'IPv6', port: 80 }, 'http://[::1]:80'],
  ])('%j → %s', (address, expected) => {
    expect(listeningUrl(address)).toBe(expected);
  });
});
