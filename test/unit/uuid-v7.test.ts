import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newId } from '../../src/lib/uuid-v7.js';

describe('newId (UUID version 7)', () => {
  it.each([
    ['the epoch', 0, '00000000-0000-7'],
    ['2026-11-25T07:00:00.000Z', Date.parse('2026-11-25T07:00:00.000Z'), '01a21181-0d80-7'],
    ['the last millisecond of 48 bits', 2 ** 48 - 1, 'ffffffff-ffff-7'],
  ])('puts the milliseconds of %s first, then version 7 and the RFC variant', (_name, now, prefix) => {
    const id = newId(now);
    expect(id.startsWith(prefix)).toBe(true);
    expect(id[19]).toMatch(/[89ab]/);
    expect(z.uuid().safeParse(id).success).toBe(true);
  });

  it('orders ids of later milliseconds after earlier ones, and never repeats', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => newId(1_700_000_000_000 + i));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 10_000 }, () => newId(0))).size).toBe(10_000);
  });
});
