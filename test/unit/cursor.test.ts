import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/lib/cursor.js';

const key = Buffer.alloc(32, 7);
const otherKey = Buffer.alloc(32, 8);

describe('cursor encoding', () => {
  it.each([
    { mode: 'natural', values: ['2026-01-01T00:00:00.000Z'], id: '6f0e7a0c-3d5b-4a55-9b5c-0a1b2c3d4e5f' },
    { mode: 'changed', values: [3, 'Table 7'], id: '00000000-0000-4000-8000-000000000000' },
    { mode: 'natural', values: [], id: 'x' },
  ])('round-trips %j', (position) => {
    expect(decodeCursor(encodeCursor(position, key), key)).toEqual(position);
  });

  it.each([
    ['empty', ''],
    ['no signature', 'eyJhIjoxfQ'],
    ['garbage', '!!!.???'],
    ['signed with another key', encodeCursor({ mode: 'natural', values: [1], id: 'a' }, otherKey)],
    [
      'payload edited',
      (() => {
        const c = encodeCursor({ mode: 'natural', values: [1], id: 'a' }, key);
        return `${c[0] === 'W' ? 'X' : 'W'}${c.slice(1)}`;
      })(),
    ],
  ])('refuses %s', (_name, cursor) => {
    expect(decodeCursor(cursor, key)).toBeNull();
  });
});
