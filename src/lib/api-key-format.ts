import { createHash, randomBytes } from 'node:crypto';

export type KeyKind = 'live' | 'test' | 'publishable';

const keyPattern = /^(gsk_test_|gsk_|gspk_test_|gspk_)[A-Za-z0-9]{43}$/;
const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

export function isWellFormedKey(key: string): boolean {
  return keyPattern.test(key);
}

export function prefixForKey(kind: KeyKind, testOrganisation: boolean): string {
  if (kind === 'publishable') return testOrganisation ? 'gspk_test_' : 'gspk_';
  return kind === 'test' ? 'gsk_test_' : 'gsk_';
}

/** 32 random bytes written in base62, always 43 characters. */
export function encodeBase62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = alphabet[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(43, '0');
}

export function generateKey(prefix: string): string {
  return prefix + encodeBase62(randomBytes(32));
}

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}
