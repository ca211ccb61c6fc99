// Redis topologies of the tests' own, from the Debian package's binaries (redis-server runs a
// Sentinel with --sentinel and a cluster node with --cluster-enabled yes; redis-cli --cluster create
// joins the nodes): every server on a free 127.0.0.1 port, without persistence, tracked by pid
// (test/chaos/own-processes.ts ends them all).
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { freePort } from '../support/free-port.js';
import { endProcess, makeTempDir, track } from '../chaos/own-processes.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The binaries the topologies need: installed from Debian's packages when missing and this runs as
 * root (CI), else an error saying what to install. Never a silent skip.
 */
export function ensureRedisBinaries(): void {
  const has = (bin: string) => {
    try {
      execFileSync('sh', ['-c', `command -v ${bin}`], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (has('redis-server') && has('redis-cli')) return;
  if (process.getuid?.() !== 0) throw new Error('redis-server and redis-cli are needed: apt-get install redis-server');
  execFileSync('apt-get', ['install', '-y', '--no-install-recommends', 'redis-server'], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

export interface OwnServer {
  port: number;
  child: ChildProcess;
  kill: () => Promise<void>;
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** A quick connection to one server, for setting up and inspecting (never the application's). */
export async function withServer<T>(port: number, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => {});
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

async function startServer(args: string[], dir: string, port: number): Promise<OwnServer> {
  const child = track(spawn('redis-server', args, { cwd: dir, stdio: 'ignore' }));
  await waitFor(() => withServer(port, async (r) => (await r.ping()) === 'PONG'), 15_000, `redis-server on port ${port}`);
  return { port, child, kill: () => endProcess(child, 'SIGKILL') };
}

const baseArgs = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

// ---------------------------------------------------------------- Cluster

export interface OwnCluster {
  masters: OwnServer[];
  /** `host:port` seeds for REDIS_CLUSTER_NODES. */
  seeds: string;
}

/** `count` masters without replicas, joined into one cluster covering all 16384 slots. */
export async function startOwnCluster(count = 3): Promise<OwnCluster> {
  const dir = makeTempDir('redis-cluster');
  const masters: OwnServer[] = [];
  for (let i = 0; i < count; i++) {
    const port = await freePort();
    masters.push(
      await startServer(
        [
          ...baseArgs(port),
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          path.join(dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
        ],
        dir,
        port,
      ),
    );
  }
  await run('redis-cli', ['--cluster', 'create', ...masters.map((m) => `127.0.0.1:${m.port}`), '--cluster-yes']);
  await waitFor(
    async () =>
      (
        await Promise.all(masters.map((m) => withServer(m.port, async (r) => (await r.cluster('INFO')).includes('cluster_state:ok'))))
      ).every(Boolean),
    30_000,
    'the cluster to cover its slots',
  );
  return { masters, seeds: masters.map((m) => `127.0.0.1:${m.port}`).join(',') };
}

/** The slot of a key, as the cluster computes it. */
export function slotOf(cluster: OwnCluster, key: string): Promise<number> {
  return withServer(cluster.masters[0].port, async (r) => Number(await r.cluster('KEYSLOT', key)));
}

/** Which master owns a slot (its port) and every master's node id by port. */
async function ownership(cluster: OwnCluster, slot: number): Promise<{ owner: number; ids: Map<number, string> }> {
  const ids = new Map<number, string>();
  for (const m of cluster.masters) ids.set(m.port, await withServer(m.port, async (r) => String(await r.cluster('MYID'))));
  const slots = await withServer(cluster.masters[0].port, (r) => r.cluster('SLOTS'));
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  if (!range?.[2]) throw new Error(`slot ${slot} has no owner`);
  return { owner: Number(range[2][1]), ids };
}

/**
 * Moves one slot to another master while clients use it, as `redis-cli --cluster reshard` does for
 * each slot: IMPORTING on the target, MIGRATING on the source, the keys moved in batches (MIGRATE),
 * then the slot given to the target on every master. Returns the source and target ports and the keys moved.
 */
export async function migrateSlot(cluster: OwnCluster, slot: number): Promise<{ from: number; to: number; keys: number }> {
  const { owner, ids } = await ownership(cluster, slot);
  const target = cluster.masters.find((m) => m.port !== owner)!.port;
  await withServer(target, (r) => r.cluster('SETSLOT', slot, 'IMPORTING', ids.get(owner)!));
  await withServer(owner, (r) => r.cluster('SETSLOT', slot, 'MIGRATING', ids.get(target)!));
  let moved = 0;
  await withServer(owner, async (r) => {
    for (;;) {
      const keys = (await r.cluster('GETKEYSINSLOT', slot, 100)) as string[];
      if (!keys.length) break;
      await r.call('MIGRATE', '127.0.0.1', String(target), '', '0', '10000', 'REPLACE', 'KEYS', ...keys);
      moved += keys.length;
    }
  });
  for (const m of [target, owner, ...cluster.masters.map((x) => x.port)])
    await withServer(m, (r) => r.cluster('SETSLOT', slot, 'NODE', ids.get(target)!));
  return { from: owner, to: target, keys: moved };
}

/** How many keys matching any of `patterns` each master holds. */
export async function keysPerMaster(cluster: OwnCluster, patterns: string[]): Promise<number[]> {
  return Promise.all(
    cluster.masters.map((m) =>
      withServer(m.port, async (r) => {
        let count = 0;
        for (const pattern of patterns) {
          let cursor = '0';
          do {
            const [next, keys] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
            cursor = next;
            count += keys.length;
          } while (cursor !== '0');
        }
        return count;
      }),
    ),
  );
}

// ---------------------------------------------------------------- Sentinel

export interface OwnSentinelGroup {
  masterName: string;
  master: OwnServer;
  replica: OwnServer;
  sentinels: OwnServer[];
  /** `host:port` list for REDIS_SENTINELS. */
  sentinelList: string;
  /** The port Sentinel names as the master now. */
  currentMasterPort: () => Promise<number>;
}

/** A master and one replica of it, in sync. */
export async function startOwnReplicaPair(dir = makeTempDir('redis-replica')): Promise<{ master: OwnServer; replica: OwnServer }> {
  const masterPort = await freePort();
  const master = await startServer(baseArgs(masterPort), dir, masterPort);
  const replicaPort = await freePort();
  const replica = await startServer([...baseArgs(replicaPort), '--replicaof', '127.0.0.1', String(masterPort)], dir, replicaPort);
  await waitFor(
    () => withServer(replicaPort, async (r) => (await r.info('replication')).includes('master_link_status:up')),
    15_000,
    'the replica to sync',
  );
  return { master, replica };
}

/** A master, one replica of it and three Sentinels watching it (quorum 2, down after 1 s). */
export async function startOwnSentinelGroup(masterName = 'floorline'): Promise<OwnSentinelGroup> {
  const dir = makeTempDir('redis-sentinel');
  const { master, replica } = await startOwnReplicaPair(dir);
  const masterPort = master.port;
  const sentinels: OwnServer[] = [];
  for (let i = 0; i < 3; i++) {
    const port = await freePort();
    // Sentinel rewrites its configuration file: one each, in the temporary directory.
    const file = path.join(dir, `sentinel-${port}.conf`);
    writeFileSync(
      file,
      [
        `port ${port}`,
        'bind 127.0.0.1',
        `dir ${dir}`,
        `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 2`,
        `sentinel down-after-milliseconds ${masterName} 1000`,
        `sentinel failover-timeout ${masterName} 10000`,
        `sentinel parallel-syncs ${masterName} 1`,
        '',
      ].join('\n'),
    );
    sentinels.push(await startServer([file, '--sentinel'], dir, port));
  }
  const currentMasterPort = () =>
    withServer(sentinels[0].port, async (r) => Number(((await r.call('SENTINEL', 'get-master-addr-by-name', masterName)) as string[])[1]));
  // Every Sentinel knows the replica and the others before a failover is asked of them.
  await waitFor(
    async () =>
      (
        await Promise.all(
          sentinels.map((s) =>
            withServer(s.port, async (r) => {
              const info = (await r.call('SENTINEL', 'master', masterName)) as string[];
              const field = (name: string) => Number(info[info.indexOf(name) + 1]);
              return field('num-slaves') >= 1 && field('num-other-sentinels') >= 2;
            }),
          ),
        )
      ).every(Boolean),
    30_000,
    'the Sentinels to know the replica and each other',
  );
  return { masterName, master, replica, sentinels, sentinelList: sentinels.map((s) => `127.0.0.1:${s.port}`).join(','), currentMasterPort };
}
