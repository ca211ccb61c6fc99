import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisConnection, reconnectDelay, reconnectOnReadonly, type ConnectionPurpose } from '../../src/redis/connections.js';
import { bullPrefixOf, deploymentKeysPattern, namespaceOf, queuePrefixOfKey, taggedKey } from '../../src/redis/key-layout.js';
import { parseHostPorts, redisSettingsProblems, redisTopologyOf, type RedisSettings } from '../../src/redis/topology.js';
import { compiledEntry } from '../support/entry-process.js';

describe('Redis mode chosen by the settings', () => {
  it.each<[string, RedisSettings, ReturnType<typeof redisTopologyOf>]>([
    ['nothing set: the local server, as always', {}, { mode: 'single', url: 'redis://127.0.0.1:6379' }],
    ['REDIS_URL', { REDIS_URL: 'rediss://r.example:6380' }, { mode: 'single', url: 'rediss://r.example:6380' }],
    [
      'REDIS_SENTINELS',
      { REDIS_SENTINELS: 's1:26379, s2:26380', REDIS_SENTINEL_MASTER: 'main', REDIS_SENTINEL_PASSWORD: 'sp', REDIS_PASSWORD: 'p' },
      {
        mode: 'sentinel',
        sentinels: [
          { host: 's1', port: 26379 },
          { host: 's2', port: 26380 },
        ],
        masterName: 'main',
        sentinelPassword: 'sp',
        password: 'p',
      },
    ],
    [
      'REDIS_CLUSTER_NODES',
      { REDIS_CLUSTER_NODES: '10.0.0.1:7000,[::1]:7001' },
      {
        mode: 'cluster',
        nodes: [
          { host: '10.0.0.1', port: 7000 },
          { host: '::1', port: 7001 },
        ],
        password: undefined,
      },
    ],
  ])('%s', (_, settings, expected) => {
    expect(redisTopologyOf(settings)).toEqual(expected);
  });

  it.each<[string, RedisSettings, string[]]>([
    ['one mode is fine', { REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_MASTER: 'm' }, []],
    [
      'REDIS_URL with REDIS_SENTINELS',
      { REDIS_URL: 'redis://x', REDIS_SENTINELS: 'a:1', REDIS_SENTINEL_MASTER: 'm' },
      ['REDIS_SENTINELS: REDIS_URL and REDIS_SENTINELS are both set: choose one Redis mode'],
    ],
    [
      'REDIS_URL with REDIS_CLUSTER_NODES',
      { REDIS_URL: 'redis://x', REDIS_CLUSTER_NODES: 'a:1' },
      ['REDIS_CLUSTER_NODES: REDIS_URL and REDIS_CLUSTER_NODES are both set: choose one Redis mode'],
    ],
    [
      'sentinels without the master name',
      { REDIS_SENTINELS: 'a:1' },
      ['REDIS_SENTINEL_MASTER: is required with REDIS_SENTINELS (the name Sentinel knows the master by)'],
    ],
    ['a master name without sentinels', { REDIS_SENTINEL_MASTER: 'm' }, ['REDIS_SENTINEL_MASTER: is only used with REDIS_SENTINELS']],
    ['a list entry without a port', { REDIS_CLUSTER_NODES: 'a:1,b' }, ['REDIS_CLUSTER_NODES: must be a comma-separated list of host:port']],
    [
      'a port out of range',
      { REDIS_SENTINELS: 'a:70000', REDIS_SENTINEL_MASTER: 'm' },
      ['REDIS_SENTINELS: must be a comma-separated list of host:port'],
    ],
  ])('%s', (_, settings, expected) => {
    expect(redisSettingsProblems(settings).map((p) => `${p.variable}: ${p.message}`)).toEqual(expected);
  });

  it('parses host:port lists and refuses anything else', () => {
    expect(parseHostPorts(' a:1 ,b:2,')).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
    ]);
    expect(parseHostPorts('')).toBeNull();
    expect(parseHostPorts('a:0')).toBeNull();
    expect(parseHostPorts('a:b')).toBeNull();
  });

  it('refuses to start with two modes set, naming both variables', async () => {
    const env = { ...process.env, REDIS_URL: 'redis://127.0.0.1:6379', REDIS_CLUSTER_NODES: '127.0.0.1:7000' };
    const run = promisify(execFile)(process.execPath, [compiledEntry('src/server.ts')], { env });
    await expect(run).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('REDIS_URL and REDIS_CLUSTER_NODES are both set') });
  });
});

describe('connection factory', () => {
  const settings = (topology: ReturnType<typeof redisTopologyOf>) => ({ topology, giveUpAfterMs: 60_000 });
  // lazyConnect-free: the factory opens at once; each connection is closed before the next test.
  it.each<[ConnectionPurpose]>([['worker'], ['queues'], ['request'], ['slots']])(
    'opens the mode of the topology for %s connections',
    async (purpose) => {
      const single = createRedisConnection(settings({ mode: 'single', url: 'redis://127.0.0.1:1' }), purpose);
      const sentinel = createRedisConnection(
        settings({ mode: 'sentinel', sentinels: [{ host: '127.0.0.1', port: 1 }], masterName: 'm' }),
        purpose,
      );
      const cluster = createRedisConnection(settings({ mode: 'cluster', nodes: [{ host: '127.0.0.1', port: 1 }] }), purpose);
      try {
        for (const c of [single, sentinel, cluster]) c.on('error', () => {});
        expect(single).toBeInstanceOf(Redis);
        expect((single as Redis).options.port).toBe(1);
        expect((sentinel as Redis).options.sentinels).toEqual([{ host: '127.0.0.1', port: 1 }]);
        expect((sentinel as Redis).options.name).toBe('m');
        expect(cluster).toBeInstanceOf(Cluster);
        // BullMQ workers need commands that wait forever; the others fail after one try.
        const retries = (cluster as Cluster).options.redisOptions?.maxRetriesPerRequest;
        expect([(single as Redis).options.maxRetriesPerRequest, (sentinel as Redis).options.maxRetriesPerRequest, retries]).toEqual(
          Array(3).fill(purpose === 'worker' ? null : 1),
        );
      } finally {
        for (const c of [single, sentinel, cluster]) c.disconnect();
      }
    },
  );

  it('reconnects on READONLY only', () => {
    expect(reconnectOnReadonly(new Error("READONLY You can't write against a read only replica."))).toBe(2);
    expect(reconnectOnReadonly(new Error('ERR wrong number of arguments'))).toBe(false);
  });

  it.each<[number, number, number | null]>([
    [1, 0, 200],
    [5, 0, 1000],
    [1000, 0, 2000],
    [10, 11_000, 2000], // 200+…+1800 = 9 s waited so far
    [11, 11_000, null], // 11 s waited: give up
    [155, 300_000, 2000], // 299 s waited
    [156, 300_000, null], // 301 s waited
  ])('attempt %i with give-up after %i ms waits %s', (times, giveUp, expected) => {
    expect(reconnectDelay(times, giveUp)).toBe(expected);
  });
});

describe('key layout', () => {
  it('drops the braces of QUEUE_PREFIX and gives each group its own tag', () => {
    expect(namespaceOf('{floorline}')).toBe('floorline');
    expect(namespaceOf('{t1}wh')).toBe('t1wh');
    expect(bullPrefixOf('{floorline}', 'webhook-delivery')).toBe('{floorline:webhook-delivery}');
    expect(taggedKey('{floorline}', ['destination', 'https://a.example'], 'slots')).toBe('{floorline:destination:https://a.example}:slots');
    expect(taggedKey('{floorline}', ['rl', 'key1'], '123')).toBe('{floorline:rl:key1}:123');
  });

  it('finds the deployment of a key, and every key of a deployment with one pattern', () => {
    expect(queuePrefixOfKey('{t1wh:events}:events:wait')).toBe('{t1wh}');
    expect(queuePrefixOfKey('{t1}:x')).toBe('{t1}');
    expect(queuePrefixOfKey('other')).toBeNull();
    expect(deploymentKeysPattern('{t1}')).toBe('{t1*');
    expect(deploymentKeysPattern('{a*b}')).toBe('{a\\*b*');
  });

  it('gives different queues and the request path different hash tags, one queue one tag', () => {
    // Redis Cluster hashes the first non-empty {…} of a key when there is one.
    const tagOf = (key: string) => /\{([^}]+)\}/.exec(key)?.[1];
    const queues = ['events', 'webhook-delivery', 'imports', 'timers'].map((q) => tagOf(`${bullPrefixOf('{floorline}', q)}:${q}:wait`));
    const requestPath = [
      taggedKey('{floorline}', ['rl', 'k1'], '1'),
      taggedKey('{floorline}', ['fair', 'events'], 'epoch'),
      taggedKey('{floorline}', ['destination', 'd'], 'slots'),
    ].map(tagOf);
    expect(new Set([...queues, ...requestPath]).size).toBe(7);
    expect(tagOf(`${bullPrefixOf('{floorline}', 'events')}:events:wait`)).toBe(
      tagOf(`${bullPrefixOf('{floorline}', 'events')}:events:123`),
    );
  });
});
