import { describe, expect, it } from 'vitest';
import { createMicroBatcher, runEachAlone, type BatchOutcomes } from '../../src/lib/micro-batch.js';

const settle = (p: Promise<void>) =>
  p.then(
    () => 'ok',
    (err: Error) => err.message,
  );

describe('micro-batches of concurrent submissions', () => {
  it('runs the keys submitted together as one batch, each key once, and answers each caller with its own outcome', async () => {
    const batches: string[][] = [];
    const batcher = createMicroBatcher(
      async (keys: string[]) => {
        batches.push(keys);
        return new Map([['bad', new Error('bad event')]]) as BatchOutcomes<string>;
      },
      { maxSize: 100, lingerMs: 5 },
    );
    const outcomes = await Promise.all(['a', 'b', 'bad', 'a'].map((k) => settle(batcher.submit(k))));
    expect(batches).toEqual([['a', 'b', 'bad']]);
    expect(outcomes).toEqual(['ok', 'ok', 'bad event', 'ok']);
  });

  it('starts a batch as soon as it is full, the rest after the linger time, and fails a whole batch whose run throws', async () => {
    const batches: number[][] = [];
    const batcher = createMicroBatcher(
      async (keys: number[]) => {
        batches.push(keys);
        if (keys.includes(4)) throw new Error('database unreachable');
        return new Map();
      },
      { maxSize: 3, lingerMs: 5 },
    );
    const outcomes = await Promise.all([1, 2, 3, 4, 5].map((k) => settle(batcher.submit(k))));
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
    ]);
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'database unreachable', 'database unreachable']);
  });

  it('runs the keys of a failed batch again one by one: each gets its own outcome, a thrown non-Error as an Error', async () => {
    const ran: string[] = [];
    const outcomes = await runEachAlone(['a', 'bad', 'odd', 'b'], async (key) => {
      ran.push(key);
      if (key === 'bad') throw new Error('bad row');
      if (key === 'odd') throw 'not an error';
    });
    expect(ran).toEqual(['a', 'bad', 'odd', 'b']);
    expect([...outcomes].map(([key, err]) => [key, err?.message])).toEqual([
      ['a', undefined],
      ['bad', 'bad row'],
      ['odd', 'not an error'],
      ['b', undefined],
    ]);
    expect(outcomes.get('odd')).toBeInstanceOf(Error);
  });
});
