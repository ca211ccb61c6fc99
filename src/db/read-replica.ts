import { processConfig } from '../config.js';
import { isConnectionError } from '../lib/connection-errors.js';
import { createDrizzle, createPool, db, type DatabasePooler, type Db } from './client.js';

export interface ReadReplicaOptions {
  /** The replica; null: none, every read goes to the primary. */
  url: string | null;
  maxLagMs: number;
  pooler: DatabasePooler;
  poolSize: number;
  statementTimeoutMs: number;
  /** The primary's drizzle database and driver pool. */
  primary: Db;
  /** How often the lag is measured. */
  probeEveryMs?: number;
}

export interface ReadReplica {
  /**
   * Runs a read that tolerates lag (reports, exports, GET /events pages) on the replica when it is
   * within its lag limit, on the primary otherwise; a read the replica fails to answer (down) runs
   * again on the primary.
   */
  read: <T>(work: (conn: Db) => Promise<T>) => Promise<T>;
  /** The database such a read goes to now (for a read that streams, which cannot start again elsewhere). */
  choose: () => Promise<Db>;
  configured: boolean;
  /** The replica's lag in seconds as last measured (measuring starts on first use); null: no replica, or it does not answer. */
  lagSeconds: () => number | null;
  end: (timeoutSeconds: number) => Promise<void>;
}

/** Positions kept at most: at one a second, an hour behind is "too far" for any limit. */
const maxPending = 3600;

/** A WAL position (`16/B374D848`) as a number that orders like it. */
function lsnValue(lsn: string): bigint {
  const [high, low] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/** A primary position not yet replayed by the replica: since when it is waited for. */
interface PendingPosition {
  lsn: string;
  since: number;
}

/**
 * The replica's lag, measured against the primary itself: each probe notes the primary's WAL
 * position, and the lag is how long ago the oldest position the replica has not yet replayed was
 * noted. (pg_last_xact_replay_timestamp alone grows while the primary is idle, and reads 0 on a
 * replica that stopped receiving.) A probe that fails marks the replica down until the next
 * succeeds.
 */
export function createReadReplica(options: ReadReplicaOptions): ReadReplica {
  const primary = options.primary;
  if (!options.url) {
    return { configured: false, read: (work) => work(primary), choose: async () => primary, lagSeconds: () => null, end: async () => {} };
  }
  const pool = createPool({
    url: options.url,
    pooler: options.pooler,
    poolSize: options.poolSize,
    statementTimeoutMs: options.statementTimeoutMs,
  });
  const replica = createDrizzle(pool);
  const pending: PendingPosition[] = [];
  let lagMs: number | null = null;
  let probing: Promise<void> | null = null;
  let timer: NodeJS.Timeout | null = null;

  async function probe(): Promise<void> {
    try {
      const [{ lsn }] = await primary.$client.unsafe<Array<{ lsn: string }>>('select pg_current_wal_lsn()::text as lsn');
      pending.push({ lsn, since: Date.now() });
      const [{ replayed }] = await pool.unsafe<Array<{ replayed: string | null }>>('select pg_last_wal_replay_lsn()::text as replayed');
      if (replayed === null) throw new Error('DATABASE_READ_URL is not a replica (no WAL replayed)');
      const reached = lsnValue(replayed);
      while (pending.length && (lsnValue(pending[0].lsn) <= reached || pending.length > maxPending)) pending.shift();
      lagMs = pending.length ? Date.now() - pending[0].since : 0;
    } catch {
      lagMs = null;
      pending.length = 0;
    }
  }

  function startProbing(): Promise<void> {
    if (!timer) {
      timer = setInterval(() => void (probing ??= probe().finally(() => (probing = null))), options.probeEveryMs ?? 1000);
      timer.unref();
    }
    return (probing ??= probe().finally(() => (probing = null)));
  }

  async function choose(): Promise<Db> {
    if (!timer) await startProbing();
    return lagMs === null || lagMs > options.maxLagMs ? primary : replica;
  }

  return {
    configured: true,
    choose,
    async read(work) {
      const conn = await choose();
      if (conn === primary) return work(primary);
      try {
        return await work(replica);
      } catch (err) {
        if (!isConnectionError(err)) throw err;
        lagMs = null;
        return work(primary);
      }
    },
    lagSeconds: () => {
      if (!timer) void startProbing();
      return lagMs === null ? null : lagMs / 1000;
    },
    async end(timeoutSeconds) {
      if (timer) clearInterval(timer);
      await pool.end({ timeout: timeoutSeconds });
    },
  };
}

let processReplica: ReadReplica | undefined;

/**
 * This process's replica (DATABASE_READ_URL, DATABASE_READ_MAX_LAG_MS), in front of its primary:
 * created on first use from the process's configuration, never when this module is loaded.
 */
export function readReplica(): ReadReplica {
  const config = processConfig();
  return (processReplica ??= createReadReplica({
    url: config.DATABASE_READ_URL ?? null,
    maxLagMs: config.DATABASE_READ_MAX_LAG_MS,
    pooler: config.DATABASE_POOLER,
    poolSize: config.DB_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
    primary: db(),
  }));
}

/** Ends this process's replica connections, if it has any. */
export async function closeReadReplica(timeoutSeconds: number): Promise<void> {
  await processReplica?.end(timeoutSeconds);
}

/** Runs a read that tolerates lag on this process's replica when it may (see ReadReplica.read). */
export function readTolerantOfLag<T>(work: (conn: Db) => Promise<T>): Promise<T> {
  return readReplica().read(work);
}
/** The database a read that tolerates lag goes to now (see ReadReplica.choose). */
export function chooseTolerantOfLag(): Promise<Db> {
  return readReplica().choose();
}
