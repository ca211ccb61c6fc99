import { fillPlaceholders, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import { AsyncLocalStorage } from 'node:async_hooks';
import postgres, { type Sql, type TransactionSql } from 'postgres';
import { config } from '../config.js';
import * as schema from './schema/index.js';

const pool = postgres(config.DATABASE_URL, {
  max: config.DB_POOL_SIZE,
  onnotice: () => {},
  connect_timeout: 5,
  // Reconnect at once. The driver's default waits up to 20 s between attempts once a few have
  // failed, and the queries queued meanwhile wait with it: while PostgreSQL is down a request hung
  // instead of answering 503, and recovery waited for the next attempt. Attempts are made only for
  // queued queries (each takes one and fails it with the connection error), so this cannot spin.
  backoff: () => 0,
  // No statement outlives its purpose: PostgreSQL cancels one that runs longer (the API answers 503).
  connection: { statement_timeout: config.DATABASE_STATEMENT_TIMEOUT_MS },
});

/**
 * The transactions a request has open, each known by its PostgreSQL backend and start, to cancel if
 * its client leaves. Cancellation goes through PostgreSQL (pg_cancel_backend on that backend, while it
 * is still in that transaction), never through the driver's per-query cancel: that one, on statements
 * waiting in a connection's pipeline or opening one, left queries unsettled for good and the pool
 * stuck (measured under load; see docs/operations.md "Statement timeout and clients that leave").
 */
interface CancellationScope {
  cancelled: boolean;
  transactions: Set<Promise<TransactionSession | null>>;
}
interface TransactionSession {
  pid: number;
  started: string;
}

/** The error a request's new transaction fails with once its client has left. */
function clientGone(): Error {
  return Object.assign(new Error('57014: the client has gone; the request starts no new transaction'), { code: '57014' });
}

/**
 * What the code running sees: its request's cancellation scope, and the driver's transaction that the
 * drizzle transaction it runs in uses (driverOf: drizzle does not expose its transaction's
 * connection). One store for both: each store costs every promise created in the process.
 */
const context = new AsyncLocalStorage<{ scope?: CancellationScope; tx?: TransactionSql }>();

/**
 * `client` whose method `method` (the driver's `begin` or `savepoint`, which take their callback
 * last) is called with `around(callback)` in place of the callback; `around` may throw to refuse.
 */
function wrapCallbackMethod<S extends object>(client: S, method: 'begin' | 'savepoint', around: (work: (tx: TransactionSql) => unknown) => (tx: TransactionSql) => unknown): S {
  return new Proxy(client, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property !== method) return value;
      return (...args: unknown[]) => {
        const work = args.pop() as (tx: TransactionSql) => unknown;
        try {
          return (value as (...a: unknown[]) => unknown).apply(target, [...args, around(work)]);
        } catch (err) {
          return Promise.reject(err);
        }
      };
    },
  });
}

/**
 * The driver's transaction (or savepoint: drizzle's nested transactions) as the code inside it sees
 * it: recorded for driverOf, and its savepoints likewise, so that inside a savepoint a statement's
 * error fails the savepoint PostgreSQL has aborted (and which rolls back to it), not the transaction
 * around it.
 */
function trackSavepoints(tx: TransactionSql): TransactionSql {
  return wrapCallbackMethod(tx, 'savepoint', (work) => (sp) => {
    const tracked = trackSavepoints(sp);
    return context.run({ scope: context.getStore()?.scope, tx: tracked }, () => work(tracked));
  });
}

/**
 * The pool as drizzle and the services see it: the driver itself, except that a transaction records
 * its driver transaction for the code it runs (driverOf), and one opened inside a request's
 * cancellation scope records which backend runs it (one statement, pipelined before the
 * transaction's own), and is refused once the client has gone.
 */
function cancellable<S extends object>(client: S): S {
  return wrapCallbackMethod(client, 'begin', (work) => {
    const scope = context.getStore()?.scope;
    if (scope?.cancelled) throw clientGone();
    return (tx) => {
      const tracked = trackSavepoints(tx);
      return context.run({ scope, tx: tracked }, () => (scope ? runInScope(scope, tracked, work) : work(tracked)));
    };
  });
}

async function runInScope(scope: CancellationScope, tx: TransactionSql, work: (tx: TransactionSql) => unknown): Promise<unknown> {
  // The connection may have come only after the client left (the request waited for one).
  if (scope.cancelled) throw clientGone();
  const session = tx
    .unsafe<TransactionSession[]>('select pg_backend_pid() as pid, now()::text as started', [], { prepare: true })
    .then(([row]) => row, () => null);
  scope.transactions.add(session);
  try {
    return await work(tx);
  } finally {
    scope.transactions.delete(session);
  }
}

export const sql = cancellable(pool);

/**
 * Runs `work` outside any request's cancellation scope: what must happen whether or not the client
 * stays (recording an idempotent request's outcome, numbering committed events, a stream feed that
 * serves every client of an organisation).
 */
export function runDetached<T>(work: () => T): T {
  const tx = context.getStore()?.tx;
  return tx ? context.run({ tx }, work) : context.exit(work);
}

/**
 * Runs `work` (a request) so that `cancel()` stops the statement each of its open transactions is
 * running and refuses the transactions it opens next: a request whose client has gone stops using
 * the database at once, instead of PostgreSQL working (or waiting on a lock) for nobody. The check
 * that the backend is still in that transaction and the cancel are one statement, so another
 * request's statement on the same connection later is never touched. Statements outside a
 * transaction (reads) run to their end, bounded by the statement timeout.
 */
export function runCancellable<T>(work: () => T): { result: T; cancel: () => void } {
  const scope: CancellationScope = { cancelled: false, transactions: new Set() };
  const result = context.run({ scope }, work);
  return {
    result,
    cancel: () => {
      scope.cancelled = true;
      for (const session of scope.transactions) void cancelUntilEnded(scope, session).catch(() => {});
    },
  };
}

/**
 * PostgreSQL cancels the statement a backend is running, not its transaction: a cancel that arrives
 * between two statements (the next one still on its way) changes nothing, and that statement could
 * then wait on a lock for nobody. So the cancel is sent again until the transaction has ended, which
 * the first cancel that meets a statement brings about.
 */
async function cancelUntilEnded(scope: CancellationScope, session: Promise<TransactionSession | null>): Promise<void> {
  const s = await session;
  while (s && scope.transactions.has(session)) {
    await runDetached(() => pool.unsafe('select pg_cancel_backend(pid) from pg_stat_activity where pid = $1 and xact_start = $2::timestamptz', [s.pid, s.started]));
    await new Promise((resolve) => setTimeout(resolve, cancelRepeatMs));
  }
}
const cancelRepeatMs = 100;

export const db = drizzle(sql, { schema });
export type Db = typeof db;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either the pool or an open transaction: services take this so callers choose the boundary. */
export type DbOrTx = Db | Tx;

const dialect = new PgDialect();

/**
 * A hand-written statement built once, its values left as placeholders (`sql.placeholder`), run on
 * the pool as a prepared statement with the values of each call: for a statement on a hot path,
 * where building its text with drizzle at every call would cost more than running it. Values go to
 * the driver as given (write instants as ISO strings, and cast the placeholders in the SQL).
 */
export function prepareSql<T>(statement: SQL): (values: Record<string, unknown>) => Promise<T[]> {
  const query = dialect.sqlToQuery(statement);
  return async (values) => (await db.$client.unsafe(query.sql, fillPlaceholders(query.params, values) as never[], { prepare: true })) as unknown as T[];
}

/**
 * The driver under `conn`: the pool, or the driver's transaction that `conn` (a drizzle transaction
 * or one of its savepoints, which share its connection) runs in. For statements sent to the driver
 * itself (runSql, insertRows): prepared, planned once per connection.
 */
export function driverOf(conn: DbOrTx): Sql | TransactionSql {
  if (conn === db) return sql;
  const tx = context.getStore()?.tx;
  if (!tx) throw new Error('a transaction used outside the function it was given to');
  return tx;
}

/**
 * Runs a hand-written statement (the engine's loads, its lock statements) and returns its rows, as a
 * prepared statement: planned once per connection, where a statement drizzle's `execute` sends is
 * parsed and planned each time (for the engine's venue-day load that halved bookings per second).
 * Statements given together (Promise.all) are still pipelined on the connection.
 */
export async function runSql<T>(conn: DbOrTx, statement: SQL): Promise<T[]> {
  const query = dialect.sqlToQuery(statement);
  return (await driverOf(conn).unsafe(query.sql, query.params as never[], { prepare: true })) as unknown as T[];
}
