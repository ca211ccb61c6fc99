import { createHash, timingSafeEqual } from 'node:crypto';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * Compares a presented credential with the expected one in constant time whatever their lengths:
 * both are hashed to 32 bytes first, so that neither an early return on a length mismatch nor the
 * comparison itself tells how long or how close the expected value is.
 */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}
