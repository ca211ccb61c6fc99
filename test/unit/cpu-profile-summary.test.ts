import { describe, expect, it } from 'vitest';
import { groupOfFrame, mergeCpuSummaries, summariseCpuProfile, type CpuProfile } from '../../bench/support/cpu-profile-summary.js';

const root = '/repo';

describe('groupOfFrame', () => {
  it.each([
    ['(garbage collector)', '', 'garbage collection'],
    ['(idle)', '', 'idle'],
    ['(program)', '', 'program (outside JavaScript)'],
    ['writeBuffer', '', 'V8 builtins'],
    ['emit', 'node:events', 'node internals'],
    ['is', 'file:///repo/node_modules/drizzle-orm/entity.js', 'drizzle-orm'],
    ['x', 'file:///repo/node_modules/@bull-board/api/dist/a.js', '@bull-board/api'],
    ['x', 'file:///repo/node_modules/bullmq/node_modules/ioredis/built/a.js', 'ioredis'],
    ['createReservationIn', 'file:///repo/src/services/reservations/create-reservation.ts', 'src/services/reservations'],
    ['evaluate', 'file:///repo/src/lib/availability/venue-day.ts', 'src/lib'],
    ['runSql', 'file:///repo/src/db/client.ts', 'src/db'],
    ['main', 'file:///repo/src/main.ts', 'src'],
    ['start', 'file:///repo/workers/events.ts', 'workers'],
    ['other', 'file:///elsewhere/x.js', 'other scripts'],
  ])('%s in %s counts toward %s', (functionName, url, group) => {
    expect(groupOfFrame(functionName, url, root)).toBe(group);
  });
});

describe('summariseCpuProfile', () => {
  // Four nodes; each sample's time is the delta to the next sample.
  const profile: CpuProfile = {
    nodes: [
      { id: 1, callFrame: { functionName: '(idle)', url: '' } },
      { id: 2, callFrame: { functionName: 'is', url: 'file:///repo/node_modules/drizzle-orm/entity.js' } },
      { id: 3, callFrame: { functionName: 'runSql', url: 'file:///repo/src/db/client.ts' } },
      { id: 4, callFrame: { functionName: '(garbage collector)', url: '' } },
    ],
    samples: [2, 3, 2, 1, 4, 3],
    timeDeltas: [0, 3000, 1000, 2000, 5000, 4000],
  };

  it('adds self time per group, idle apart, shares of the busy time', () => {
    const summary = summariseCpuProfile(profile, root);
    expect(summary.idleMs).toBe(5);
    expect(summary.busyMs).toBe(10);
    expect(summary.groups).toEqual([
      { group: 'drizzle-orm', ms: 5, percent: 50 },
      { group: 'garbage collection', ms: 4, percent: 40 },
      { group: 'src/db', ms: 1, percent: 10 },
    ]);
  });

  it('merges the summaries of several processes of one role', () => {
    const one = summariseCpuProfile(profile, root);
    const merged = mergeCpuSummaries([one, one]);
    expect(merged.busyMs).toBe(20);
    expect(merged.groups[0]).toEqual({ group: 'drizzle-orm', ms: 10, percent: 50 });
  });
});
