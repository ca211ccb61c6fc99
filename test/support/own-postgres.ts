import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const binaries = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A PostgreSQL cluster of this test alone, on a free port, that it may stop and start at will. */
export interface OwnPostgres {
  url: string;
  port: number;
  /** `pg_ctl stop` (immediate: the backends die at once, as in a crash). */
  stop: (mode?: 'fast' | 'immediate') => Promise<void>;
  start: () => Promise<void>;
  /** `pg_ctl promote`: a standby becomes a primary. */
  promote: () => Promise<void>;
  /** Stops the cluster and deletes its directory. */
  destroy: () => Promise<void>;
}

export const ownPostgresAvailable = existsSync(join(binaries, 'initdb'));

const asRoot = process.getuid?.() === 0;
const pg = (tool: string, args: string[]) =>
  asRoot ? run('runuser', ['-u', 'postgres', '--', join(binaries, tool), ...args]) : run(join(binaries, tool), args);

/** A temporary directory the cluster may use (PostgreSQL refuses to run as root: as root it is the `postgres` user's). */
async function clusterDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'floorline-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  return dir;
}

/** The cluster in `dir`/data, started on `port` with its socket in `dir`. */
async function runCluster(dir: string, port: number): Promise<OwnPostgres> {
  const data = join(dir, 'data');
  // OWN_PG_OPTIONS: more server options, e.g. `-c shared_preload_libraries=pg_stat_statements` to time statements.
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off ${process.env.OWN_PG_OPTIONS ?? ''}`.trim();
  const start = async () => {
    await pg('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  };
  const stop = async (mode: 'fast' | 'immediate' = 'immediate') => {
    await pg('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']);
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    promote: async () => {
      await pg('pg_ctl', ['-D', data, '-w', 'promote']);
    },
    destroy: async () => {
      await stop('immediate').catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * initdb into a temporary directory (trust authentication; no fsync, which only matters if the machine
 * itself crashes: a committed transaction still survives an immediate stop),
 * started on a free 127.0.0.1 port with its socket in that directory. PostgreSQL refuses to run as
 * root, so as root the cluster belongs to the `postgres` system user.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dir = await clusterDir();
  await pg('initdb', ['-D', join(dir, 'data'), '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
  return runCluster(dir, await freePort());
}

/**
 * A streaming standby of `primary` (pg_basebackup -R: hot standby, read-only), on a free port; its
 * `promote` makes it a primary, as a failover does.
 */
export async function startOwnStandby(primary: OwnPostgres): Promise<OwnPostgres> {
  const dir = await clusterDir();
  await pg('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primary.port),
    '-U',
    'postgres',
    '-D',
    join(dir, 'data'),
    '-R',
    '-X',
    'stream',
    // A fast checkpoint to start from: the default spreads it over the checkpoint interval, which
    // after a fresh cluster's migrations held the copy for most of a minute.
    '--checkpoint=fast',
    '--no-sync',
  ]);
  return runCluster(dir, await freePort());
}
