import { describe, expect, it } from 'vitest';
import { BoundedCache } from '../../src/lib/bounded-cache.js';

type Step = ['set', string, number] | ['tick', number];

function run(max: number, ttlMs: number, steps: Step[]) {
  let now = 0;
  const cache = new BoundedCache<number>(max, ttlMs, () => now);
  for (const step of steps) {
    if (step[0] === 'tick') now += step[1];
    else cache.set(step[1], step[2]);
  }
  return { cache, keys: ['a', 'b', 'c', 'd'].filter((k) => cache.get(k) !== undefined) };
}

describe('BoundedCache', () => {
  it.each<[string, number, number, Step[], string[]]>([
    [
      'keeps what fits',
      3,
      Infinity,
      [
        ['set', 'a', 1],
        ['set', 'b', 2],
      ],
      ['a', 'b'],
    ],
    [
      'drops only the oldest when full (never the whole cache)',
      2,
      Infinity,
      [
        ['set', 'a', 1],
        ['set', 'b', 2],
        ['set', 'c', 3],
      ],
      ['b', 'c'],
    ],
    [
      'a key set again becomes the newest',
      2,
      Infinity,
      [
        ['set', 'a', 1],
        ['set', 'b', 2],
        ['set', 'a', 3],
        ['set', 'c', 4],
      ],
      ['a', 'c'],
    ],
    [
      'forgets an entry at its age',
      3,
      100,
      [
        ['set', 'a', 1],
        ['tick', 60],
        ['set', 'b', 2],
        ['tick', 40],
      ],
      ['b'],
    ],
    [
      'a full cache drops the expired entries first',
      3,
      100,
      [
        ['set', 'a', 1],
        ['set', 'b', 2],
        ['tick', 50],
        ['set', 'c', 3],
        ['tick', 60],
        ['set', 'd', 4],
      ],
      ['c', 'd'],
    ],
  ])('%s', (_name, max, ttlMs, steps, expected) => {
    expect(run(max, ttlMs, steps).keys).toEqual(expected);
  });

  it('holds at most max entries whatever is set', () => {
    const { cache } = run(
      3,
      1000,
      Array.from({ length: 50 }, (_, i): Step => ['set', `k${i}`, i]),
    );
    expect(cache.size).toBe(3);
  });
});
