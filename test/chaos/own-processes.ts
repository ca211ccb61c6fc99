// The processes a fault scenario starts and may kill: its own redis-server, its own PostgreSQL
// cluster and the platform's role processes. Every one is recorded here by pid and ended by pid
// (endAll, also on exit), so a run never touches the shared servers on 5432/6379 or anything else.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import postgres from 'postgres';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const started = new Set<ChildProcess>();
const tempDirs = new Set<string>();
/** Stops of the PostgreSQL clusters started here (synchronous, so that they also run on exit). */
const clusterStops = new Set<() => void>();

/** A temporary directory removed by endAll. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `floorline-chaos-${prefix}-`));
  tempDirs.add(dir);
  return dir;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}

/** Sends a signal to one process we started, by its pid; resolves when it has exited (SIGKILL after `graceMs`). */
export async function endProcess(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 15_000): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    process.kill(child.pid!, signal);
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      if (isRunning(child)) process.kill(child.pid!, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }, graceMs);
  await exited;
  clearTimeout(timer);
}

function track(child: ChildProcess): ChildProcess {
  started.add(child);
  child.once('exit', () => started.delete(child));
  return child;
}

async function waitUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

// ---------------------------------------------------------------- Redis

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGKILL: no persistence, so the next start is empty. */
  kill: () => Promise<void>;
  /** Starts it again, empty, on the same port. */
  start: () => Promise<void>;
  stop: () => Promise<void>;
}

/** A second redis-server on a free port, without persistence (`--save "" --appendonly no`). */
export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const ping = () =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('error', () => resolve(false));
      socket.once('connect', () => socket.write('PING\r\n'));
      socket.once('data', (d) => {
        socket.destroy();
        resolve(d.toString().startsWith('+PONG'));
      });
    });
  const start = async () => {
    child = track(spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }));
    await waitUntil(ping, 10_000, `redis-server on port ${port}`);
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill: async () => child && endProcess(child, 'SIGKILL'),
    start,
    stop: async () => child && endProcess(child, 'SIGTERM', 5_000),
  };
}

// ---------------------------------------------------------------- PostgreSQL

export interface OwnPostgres {
  port: number;
  /** What another process needs to stop and start this cluster (`ownPostgresFromSpec`). */
  spec: OwnPostgresSpec;
  /** The URL of a database of this cluster. */
  url: (database: string) => string;
  createDatabase: (name: string) => Promise<string>;
  /** `pg_ctl stop -m <mode>`: the cluster's postmaster, found by its data directory. */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>;
  start: () => Promise<void>;
}

export interface OwnPostgresSpec {
  bin: string;
  dir: string;
  port: number;
}

/** The PostgreSQL binaries of this machine, if any (Debian layout, newest version). */
export function findPostgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'initdb')) && existsSync(path.join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : null;
}

/** initdb refuses to run as root: the cluster's commands then run as the postgres user. */
function asClusterOwner(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function runClusterCommand(bin: string, args: string[]): void {
  const [command, fullArgs] = asClusterOwner(bin, args);
  const result = spawnSync(command, fullArgs, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${path.basename(bin)} failed: ${result.stderr || result.stdout}`);
}

/** Control of a cluster started by startOwnPostgres, possibly in another process. */
export function ownPostgresFromSpec(spec: OwnPostgresSpec): OwnPostgres {
  const dataDir = path.join(spec.dir, 'data');
  const options = `-p ${spec.port} -k ${spec.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`;
  const cluster: OwnPostgres = {
    port: spec.port,
    spec,
    url: (database) => `postgres://postgres@127.0.0.1:${spec.port}/${database}`,
    createDatabase: async (name) => {
      const admin = postgres(cluster.url('postgres'), { max: 1, onnotice: () => {} });
      await admin.unsafe(`create database "${name}"`);
      await admin.end();
      return cluster.url(name);
    },
    stop: async (mode = 'fast') => {
      if (existsSync(path.join(dataDir, 'postmaster.pid'))) runClusterCommand(path.join(spec.bin, 'pg_ctl'), ['-D', dataDir, '-m', mode, '-w', 'stop']);
    },
    start: async () => {
      runClusterCommand(path.join(spec.bin, 'pg_ctl'), ['-D', dataDir, '-o', options, '-l', path.join(spec.dir, 'server.log'), '-w', '-t', '30', 'start']);
    },
  };
  return cluster;
}

/** A PostgreSQL cluster of its own (initdb in a temporary directory, trust auth) on a free port; null without the binaries. */
export async function startOwnPostgres(): Promise<OwnPostgres | null> {
  const bin = findPostgresBinaries();
  if (!bin) return null;
  const dir = makeTempDir('pg');
  if (process.getuid?.() === 0) {
    const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres'], { encoding: 'utf8' }).stdout);
    chownSync(dir, id('-u'), id('-g'));
  }
  runClusterCommand(path.join(bin, 'initdb'), ['-D', path.join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  const cluster = ownPostgresFromSpec({ bin, dir, port: await freePort() });
  clusterStops.add(() => {
    const dataDir = path.join(dir, 'data');
    if (existsSync(path.join(dataDir, 'postmaster.pid'))) runClusterCommand(path.join(bin, 'pg_ctl'), ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
  });
  await cluster.start();
  return cluster;
}

// ---------------------------------------------------------------- Role processes

export type Role = 'web' | 'events' | 'webhooks' | 'imports' | 'timers';

export interface RoleProcess {
  role: Role | 'all';
  child: ChildProcess;
  /** The web role's base URL. */
  url?: string;
  logFile: string;
}

/**
 * One process of the platform, started as `npm start` does from source (`node --import tsx
 * src/main.ts --role X`, or every role with `role: 'all'`), with its output in a log file.
 * Resolves once it serves: web answers /healthz, a worker has logged "role started".
 */
export async function startRole(role: Role | 'all', env: Record<string, string>, options: { port?: number } = {}): Promise<RoleProcess> {
  const logFile = path.join(makeTempDir(role), 'out.log');
  const fd = openSync(logFile, 'a');
  const serves = role === 'web' || role === 'all';
  const port = serves ? (options.port ?? (await freePort())) : 0;
  const args = ['--import', 'tsx', 'src/main.ts', ...(role === 'all' ? [] : ['--role', role])];
  const child = track(
    spawn(process.execPath, args, {
      cwd: projectRoot,
      // Its own metrics port: several processes of one role run side by side.
      env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port), METRICS_PORT: String(await freePort()) },
      stdio: ['ignore', fd, fd],
    }),
  );
  const url = serves ? `http://127.0.0.1:${port}` : undefined;
  const ready = async () => {
    if (!isRunning(child)) throw new Error(`${role} exited at start (code ${child.exitCode}): ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    if (url) return fetch(`${url}/healthz`).then((r) => r.ok, () => false);
    return readFileSync(logFile, 'utf8').includes('"msg":"role started"');
  };
  await waitUntil(ready, 60_000, `the ${role} process to start`);
  return { role, child, url, logFile };
}

/** Ends everything this module started, by pid, and removes the temporary directories. */
export async function endAll(): Promise<void> {
  await Promise.all([...started].map((child) => endProcess(child, 'SIGKILL')));
  stopClusters();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

function stopClusters(): void {
  for (const stop of clusterStops) {
    try {
      stop();
    } catch {
      // stopped already
    }
  }
  clusterStops.clear();
}

// A crash or Ctrl-C of the runner still ends what it started (synchronously: no awaiting in 'exit').
process.once('exit', () => {
  stopClusters();
  for (const child of started) {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
