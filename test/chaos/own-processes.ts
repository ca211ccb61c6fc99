// The processes a fault scenario starts and may kill: its own redis-server and the platform's role
// processes (its own PostgreSQL cluster comes from test/support/own-postgres.ts). Every one is recorded here by pid and ended by pid
// (endAll, also on exit), so a run never touches the shared servers on 5432/6379 or anything else.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { freePort, freePorts } from '../support/free-port.js';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const started = new Set<ChildProcess>();
const tempDirs = new Set<string>();

/** A temporary directory removed by endAll. */
export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `floorline-chaos-${prefix}-`));
  tempDirs.add(dir);
  return dir;
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

/** Records a process this runner started, so that endAll ends it by pid. */
export function track(child: ChildProcess): ChildProcess {
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
    child = track(
      spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' }),
    );
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

// ---------------------------------------------------------------- Role processes

export type Role = 'web' | 'events' | 'webhooks' | 'imports' | 'timers';

export interface RoleProcess {
  role: Role | 'all';
  child: ChildProcess;
  /** The web role's base URL. */
  url?: string;
  /** Its Prometheus metrics (GET), e.g. job_duration_seconds_count by queue and outcome. */
  metricsUrl: string;
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
  // Chosen together: two ports asked for one after the other were once the same one (web then failed to listen).
  const [first, second] = await freePorts(2);
  const port = serves ? (options.port ?? first) : 0;
  const metricsPort = second !== port ? second : first;
  // CHAOS_CPU_PROF_DIR: each role process writes a V8 CPU profile there when it exits (SIGTERM), for
  // finding where a scenario's time goes (`node --cpu-prof`; open it in Chrome DevTools).
  const profileDir = process.env.CHAOS_CPU_PROF_DIR;
  // A directory per process: its threads (the main one, tsx's loader) write a file each.
  const profile = profileDir
    ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profileDir, `${role}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`)}`]
    : [];
  const args = [...profile, '--import', 'tsx', 'src/main.ts', ...(role === 'all' ? [] : ['--role', role])];
  const child = track(
    spawn(process.execPath, args, {
      cwd: projectRoot,
      // Its own metrics port: several processes of one role run side by side.
      env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: String(port), METRICS_PORT: String(metricsPort) },
      stdio: ['ignore', fd, fd],
    }),
  );
  const url = serves ? `http://127.0.0.1:${port}` : undefined;
  const ready = async () => {
    if (!isRunning(child))
      throw new Error(`${role} exited at start (code ${child.exitCode}): ${readFileSync(logFile, 'utf8').slice(-2000)}`);
    if (url)
      return fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
    return readFileSync(logFile, 'utf8').includes('"msg":"role started"');
  };
  await waitUntil(ready, 60_000, `the ${role} process to start`);
  return { role, child, url, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, logFile };
}

/** Ends everything this module started, by pid, and removes the temporary directories. */
export async function endAll(): Promise<void> {
  await Promise.all([...started].map((child) => endProcess(child, 'SIGKILL')));
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

// A crash or Ctrl-C of the runner still ends what it started (synchronously: no awaiting in 'exit').
process.once('exit', () => {
  for (const child of started) {
    try {
      process.kill(child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});
