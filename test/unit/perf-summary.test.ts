import { describe, expect, it } from 'vitest';
import { groupOfStack, summarisePerfScript } from '../../bench/support/perf-summary.js';

const root = '/repo';
const node = '/usr/bin/node';
const kernel = '[kernel.kallsyms]';
const map = '/tmp/perf-10.map';

describe('groupOfStack', () => {
  it.each([
    [
      'a builtin under a JavaScript frame: the frame',
      [
        ['Builtins_LoadIC', node],
        ['JS:*runSql file:///repo/src/db/client.ts:1:490', map],
      ],
      'src/db',
    ],
    [
      'the innermost JavaScript frame wins',
      [
        ['JS:*is file:///repo/node_modules/drizzle-orm/entity.js:2:9', map],
        ['JS:*runSql file:///repo/src/db/client.ts:1:490', map],
      ],
      'drizzle-orm',
    ],
    ['an anonymous function of Node', [['JS:^ node:internal/streams/writable:548:23', map]], 'node internals'],
    [
      'garbage collection below a JavaScript frame',
      [
        ['v8::internal::Scavenger::ScavengeObject', node],
        ['JS:*VenueDay file:///repo/src/lib/availability/venue-day.ts:1:3333', map],
      ],
      'garbage collection',
    ],
    ['a helper thread of the garbage collector', [['v8::internal::ConcurrentMarking::RunMajor', node]], 'garbage collection'],
    ['a compiler thread', [['v8::internal::compiler::GraphReducer::ReduceTop', node]], 'JIT compiler'],
    [
      'the kernel without a JavaScript caller',
      [
        ['_raw_spin_unlock_irqrestore', kernel],
        ['__libc_write', '/usr/lib/x86_64-linux-gnu/libc.so.6'],
      ],
      'kernel',
    ],
    ['C++ without a JavaScript caller', [['malloc', '/usr/lib/x86_64-linux-gnu/libc.so.6']], 'C++ and libc (caller not unwound)'],
    ['no frame at all', [], 'C++ and libc (caller not unwound)'],
  ] as Array<[string, Array<[string, string]>, string]>)('%s', (_case, frames, group) => {
    expect(groupOfStack(frames, root)).toBe(group);
  });
});

describe('summarisePerfScript', () => {
  // Two worker-webhooks processes (their main threads named by --title, a helper thread named by V8),
  // a PostgreSQL backend; 10 ms a sample.
  const script = [
    'worker-webhooks  10/10',
    `\t    7f00 JS:*postWebhook file:///repo/src/services/webhooks/post-webhook.ts:1:10 (${map})`,
    '',
    'V8 DefaultWorke  10/12',
    `\t    1400 v8::internal::Scavenger::Process (${node})`,
    '',
    'worker-webhooks  11/11',
    `\t    7f00 JS:*sendCommand file:///repo/node_modules/ioredis/built/Redis.js:353:16 (/tmp/perf-11.map)`,
    `\t    7f10 JS:*postWebhook file:///repo/src/services/webhooks/post-webhook.ts:1:10 (/tmp/perf-11.map)`,
    '',
    'postgres  20/20',
    `\t    ffff tcp_sendmsg_locked (${kernel})`,
    '',
    'worker-webhooks  11/11',
    `\t    1500 malloc (/usr/lib/x86_64-linux-gnu/libc.so.6)`,
    '',
  ].join('\n');

  it('groups samples per role (a process named by its main thread), each sample its share of CPU', () => {
    const roles = summarisePerfScript(script, root, 10);
    expect(roles.map((r) => [r.role, r.processes, r.busyMs])).toEqual([
      ['worker-webhooks', 2, 40],
      ['postgres', 1, 10],
    ]);
    expect(roles[0].groups).toEqual(
      expect.arrayContaining([
        { group: 'src/services/webhooks', ms: 10, percent: 25 },
        { group: 'garbage collection', ms: 10, percent: 25 },
        { group: 'ioredis', ms: 10, percent: 25 },
        { group: 'C++ and libc (caller not unwound)', ms: 10, percent: 25 },
      ]),
    );
    expect(roles[1].groups).toEqual([{ group: 'kernel', ms: 10, percent: 100 }]);
  });
});
