import { describe, expect, it } from 'vitest';
import { mergeAllocationSummaries, summariseHeapProfile, type HeapProfile } from '../../bench/support/heap-profile-summary.js';

const root = '/repo';
const frame = (functionName: string, url: string) => ({ functionName, url });

describe('summariseHeapProfile', () => {
  // V8's root, a request handler of the project calling drizzle, which calls Node; a native frame.
  const profile: HeapProfile = {
    head: {
      callFrame: frame('(root)', ''),
      selfSize: 0,
      children: [
        {
          callFrame: frame('runSql', 'file:///repo/src/db/client.ts'),
          selfSize: 100,
          children: [
            {
              callFrame: frame('sql', 'file:///repo/node_modules/drizzle-orm/sql/sql.js'),
              selfSize: 600,
              children: [{ callFrame: frame('emit', 'node:events'), selfSize: 50, children: [] }],
            },
          ],
        },
        { callFrame: frame('(V8 API)', ''), selfSize: 250 },
      ],
    },
  };

  it('adds the sampled bytes of each allocating function per group, largest first, with shares of the whole', () => {
    expect(summariseHeapProfile(profile, root)).toEqual({
      bytes: 1000,
      groups: [
        { group: 'drizzle-orm', bytes: 600, percent: 60 },
        { group: 'V8 and native', bytes: 250, percent: 25 },
        { group: 'src/db', bytes: 100, percent: 10 },
        { group: 'node internals', bytes: 50, percent: 5 },
      ],
    });
  });

  it('walks a chain deeper than a recursive walk could (an async stack of thousands of frames)', () => {
    let head: HeapProfile['head'] = { callFrame: frame('leaf', 'file:///repo/src/lib/a.ts'), selfSize: 1 };
    for (let i = 0; i < 20_000; i++) head = { callFrame: frame('f', 'file:///repo/src/lib/a.ts'), selfSize: 1, children: [head] };
    expect(summariseHeapProfile({ head }, root)).toEqual({ bytes: 20_001, groups: [{ group: 'src/lib', bytes: 20_001, percent: 100 }] });
  });

  it('merges the summaries of several processes of one role', () => {
    const one = summariseHeapProfile(profile, root);
    const merged = mergeAllocationSummaries([one, one]);
    expect(merged.bytes).toBe(2000);
    expect(merged.groups[0]).toEqual({ group: 'drizzle-orm', bytes: 1200, percent: 60 });
  });
});
