import { fillPlaceholders, is, SQL, sql as statement, type Query } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle as drizzleOverCallback } from 'drizzle-orm/pg-proxy';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { processConfig, type Config } from '../config.js';
import { statementLogger, traceStatement } from '../tracing/statement-spans.js';
import { inSpan, isTracing } from '../tracing/tracing.js';
import { serverOptionsOf } from './primary-host.js';

/**
 * `none`: the URL reaches PostgreSQL itself (or a session-mode pooler). `transaction`: it reaches a
 * transaction-mode pooler (PgBouncer), where each transaction may run on another server
 * connection: no named prepared statements, no start-up parameters, no session state.
 */
export type DatabasePooler = 'none' | 'transaction';

export interface DatabaseOptions {
  url: string;
  pooler: DatabasePooler;
  poolSize: number;
  /** Longest a statement may run; 0: no limit. */
  statementTimeoutMs: number;
  /**
   * Called with the text of each statement as it is sent (BEGIN and COMMIT included): what a test
   * counts to keep a path's round trips from growing unseen (the driver's documented `debug` hook).
   * Tests only: with `debug` set the driver adds a statement's parameters to its errors, which
   * would carry guest data into logs.
   */
  onStatement?: (text: string) => void;
}

/**
 * A transaction that sits idle (its statements done, neither committed nor rolled back: a rollback
 * that never arrived, a process stalled) is ended by PostgreSQL after this long, its connection
 * closed: a connection left in a transaction is never handed to the next request.
 */
const idleInTransactionMs = 60_000;

/** Pools made by this process: each gets its own application_name (see dropConnectionsOf). */
let poolsMade = 0;

/** The driver's pool for `options` (postgres.js: its options are public and documented). */
export function createPool(options: DatabaseOptions) {
  const pooled = options.pooler === 'transaction';
  const onStatement = options.onStatement;
  const server = serverOptionsOf(options.url);
  const applicationName = `floorline ${process.pid} ${++poolsMade}`;
  let seenWritable = false;
  const sql = postgres(server.url, {
    max: options.poolSize,
    debug: onStatement && ((_connection, text) => onStatement(text)),
    onnotice: () => {},
    connect_timeout: 5,
    // Connections opened by src/db/primary-host.ts: with several hosts, to the one accepting writes.
    ...server.driver,
    // Reconnect at once. The driver's default waits up to 20 s between attempts once a few have
    // failed, and the queries queued meanwhile wait with it: while PostgreSQL is down a request hung
    // instead of answering 503, and recovery waited for the next attempt. Attempts are made only for
    // queued queries (each takes one and fails it with the connection error), so this cannot spin.
    backoff: () => 0,
    // Behind a transaction pooler a statement prepared on one server connection is unknown on the
    // next; the driver's own COMMIT, prepared too, then failed, was retried in the aborted transaction
    // and "succeeded" as a ROLLBACK: a booking answered 201 that was not stored. Off, this overrides
    // every `prepare: true` of the project as well.
    prepare: !pooled,
    // A server that turns read-only under open connections (default_transaction_read_only set and
    // reloaded: how a managed service or an operator fences an old primary) reports it on each of
    // them (PostgreSQL 14+); they would answer every write with 25006 for as long as they live, so
    // they are ended and the pool reconnects, with several hosts to the one accepting writes.
    onparameter: (name: string, value: string) => {
      if (name !== 'default_transaction_read_only' || pooled) return;
      if (value === 'off') seenWritable = true;
      else if (seenWritable) {
        seenWritable = false;
        void dropConnectionsOf(sql, applicationName);
      }
    },
    // A pooler refuses start-up parameters (and would not keep them per client): there, each
    // transaction sets its own (transaction below); statements outside one are bounded by the pooler's
    // query_timeout (docs/operations.md "Running on several machines").
    connection: pooled
      ? {}
      : {
          application_name: applicationName,
          statement_timeout: options.statementTimeoutMs,
          idle_in_transaction_session_timeout: idleInTransactionMs,
        },
  });
  return sql;
}

/**
 * Ends every connection of the pool named `applicationName` on the server it reaches. The driver
 * has no way to close one connection of a pool; PostgreSQL ends a backend of the same role on
 * request. This statement's own connection goes last (ended first, it would stop before the others).
 */
async function dropConnectionsOf(sql: postgres.Sql, applicationName: string): Promise<void> {
  await sql
    .unsafe('select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1 order by pid = pg_backend_pid()', [
      applicationName,
    ])
    .catch(() => {});
}

/**
 * The transactions open under a caller's signal (AuthContext.signal: a request's), each known by its
 * PostgreSQL backend and start, to cancel once the signal aborts (its client left). Cancellation goes
 * through PostgreSQL (pg_cancel_backend on that backend, while it is still in that transaction), never
 * through the driver's per-query cancel: that one, on statements waiting in a connection's pipeline or
 * opening one, left queries unsettled for good and the pool stuck (measured under load; see
 * docs/operations.md "Statement timeout and clients that leave").
 */
type OpenTransactions = Set<Promise<TransactionSession | null>>;
interface TransactionSession {
  pid: number;
  /**
   * When its transaction started, in microseconds since the epoch (text): exact, where a timestamp
   * sent back as a parameter may come back cut to milliseconds (the driver encodes a parameter the
   * server describes as timestamptz through a JavaScript Date) and then never equals xact_start.
   */
  started: string;
  /** The connection of the transaction's database that sends the cancel (Database's, apart from its pool). */
  cancels: () => ReturnType<typeof createPool>;
}

/** The error a request's transaction fails with once its client has left. */
function clientGone(): Error {
  return Object.assign(new Error('57014: the client has gone; the request does not begin or commit a transaction'), { code: '57014' });
}

/**
 * The error of a transaction whose COMMIT failed or whose outcome is unknown (the connection dropped
 * while it ran): 08007 transaction_resolution_unknown, which the API answers with 503. Never a 2xx.
 */
function commitNotConfirmed(cause: unknown): Error {
  return Object.assign(new Error(`08007: the commit was not confirmed: ${(cause as Error)?.message ?? cause}`, { cause }), {
    code: '08007',
  });
}

/**
 * The signal's open transactions, noted at its first transaction: its abort then cancels the statement
 * each of them is running. The signal is passed down explicitly (not held in an AsyncLocalStorage):
 * on Node 20 and 22 a store makes every promise of the process run its async hooks, about 85 ns each,
 * some 250 promises per booking (docs/operations.md, "Statement timeout and clients that leave").
 */
const openTransactions = new WeakMap<AbortSignal, OpenTransactions>();

function openTransactionsOf(signal: AbortSignal): OpenTransactions {
  const known = openTransactions.get(signal);
  if (known) return known;
  const open: OpenTransactions = new Set();
  openTransactions.set(signal, open);
  signal.addEventListener(
    'abort',
    () => {
      for (const session of open) void cancelUntilEnded(open, session).catch(() => {});
    },
    { once: true },
  );
  return open;
}

/**
 * PostgreSQL cancels the statement a backend is running, not its transaction: a cancel that arrives
 * between two statements (the next one still on its way) changes nothing, and that statement could
 * then wait on a lock for nobody. So the cancel is sent again until the transaction has ended, which
 * the first cancel that meets a statement brings about (or the check before COMMIT).
 */
async function cancelUntilEnded(transactions: OpenTransactions, session: Promise<TransactionSession | null>): Promise<void> {
  const s = await session;
  while (s && transactions.has(session)) {
    await s
      .cancels()
      .unsafe(
        'select pg_cancel_backend(pid) from pg_stat_activity where pid = $1 and (extract(epoch from xact_start) * 1000000)::bigint = $2::bigint',
        [s.pid, s.started],
      );
    await new Promise((resolve) => setTimeout(resolve, cancelRepeatMs));
  }
}
const cancelRepeatMs = 100;

/** drizzle over a pool of this project's (the primary's, a replica's). */
export function createDrizzle(pool: ReturnType<typeof createPool>) {
  // No `schema`: the project writes its statements with the query builders and never uses drizzle's
  // relational queries (`db.query.<table>`), whose builders drizzle would otherwise make for every
  // table at every transaction it opens. While tracing is on, a span per statement drizzle issues
  // (src/tracing/statement-spans.ts).
  return drizzle({ client: pool, ...sessionOptions() });
}
/** drizzle's session options: the statement logger while tracing is on. */
function sessionOptions() {
  return isTracing() ? { logger: statementLogger } : {};
}
export type Db = ReturnType<typeof createDrizzle>;
/** drizzle over an open transaction's connection (transactionOver). */
export type Tx = ReturnType<typeof drizzleOverCallback>;
/** Either the pool or an open transaction: services take this so callers choose the boundary. */
export type DbOrTx = Db | Tx;

export interface TransactionOptions {
  /**
   * The transaction's last statement, sent in its COMMIT's round trip: called once the work has
   * returned (and the signal was checked), it must send its statement with runSql's `atOnce`, before
   * it returns, so that the driver queues it ahead of the COMMIT it sends next on the connection.
   * Should it fail, the transaction is aborted and PostgreSQL answers the COMMIT with a ROLLBACK:
   * transaction() then rejects with its error. The driver sends a prepared statement that failed for
   * a replanning reason (a table's column changed type meanwhile) once more, and that one follows
   * the COMMIT, outside the transaction: it must fail there (openTransactionGuard; insertRows'
   * `withCommit`). `undefined`: none.
   */
  sendWithCommit?: (tx: Tx) => Promise<unknown> | undefined;
}

export interface Database {
  /** The driver's pool: statements outside transactions, LISTEN-free. */
  sql: ReturnType<typeof createPool>;
  db: Db;
  /** `signal`: the caller's (AuthContext.signal); once it aborts the transaction is cancelled (createDatabase). */
  transaction: <T>(work: (tx: Tx) => Promise<T>, signal?: AbortSignal, options?: TransactionOptions) => Promise<T>;
  /** Ends its connections (the pool's, and the one that cancels): running statements get `timeoutSeconds`. */
  end: (timeoutSeconds: number) => Promise<void>;
}

/**
 * The database a process uses, from configuration values: the driver's pool, drizzle over it, and
 * `transaction`, the one way the project opens a transaction (the driver's `begin`, with drizzle over
 * its connection (transactionOver), and:
 * the statement timeout set inside it behind a transaction pooler; the caller's signal, when given,
 * checked before BEGIN and again before COMMIT, while every lock the work took is still held, and
 * its abort cancelling the statement the transaction is running; a COMMIT that fails or whose
 * outcome is unknown reported as such, never as success).
 */
export function createDatabase(options: DatabaseOptions): Database {
  const sql = createPool(options);
  const db = createDrizzle(sql);
  // The cancels of requests whose clients left go on a connection of their own, opened at the first:
  // sent on the pool, they waited for a free connection while the transactions they were to cancel
  // held every one, waiting on a lock (until the statement timeout, or for good under a lock held
  // by a session outside the pool).
  let cancelPool: ReturnType<typeof createPool> | undefined;
  const cancels = () => (cancelPool ??= createPool({ ...options, poolSize: 1, onStatement: undefined }));
  const settings =
    options.pooler === 'transaction'
      ? statement.raw(
          `select set_config('statement_timeout', '${options.statementTimeoutMs}', true), set_config('idle_in_transaction_session_timeout', '${idleInTransactionMs}', true), ${markOpen}`,
        )
      : null;

  async function transaction<T>(work: (tx: Tx) => Promise<T>, signal?: AbortSignal, options: TransactionOptions = {}): Promise<T> {
    if (signal?.aborted) throw clientGone();
    let committing = false;
    let last: { sent: Promise<unknown> } | undefined;
    let result: T;
    try {
      result = (await sql.begin(async (connection) => {
        const tx = transactionOver(connection);
        // The request may have waited for a connection, and its client left meanwhile.
        if (signal?.aborted) throw clientGone();
        // Queued ahead of the work's first statement on the connection, pipelined with it (no round
        // trip of its own). Should it fail, the transaction is aborted and the work's statements fail.
        if (settings) void tx.execute(settings).then(undefined, () => {});
        const open = signal && openTransactionsOf(signal);
        const session = open && trackSession(open, tx, cancels);
        try {
          const result = await work(tx);
          if (signal?.aborted) throw clientGone();
          if (options.sendWithCommit) last = await sendLast(tx, options.sendWithCommit, Boolean(settings || session));
          committing = true;
          return result;
        } finally {
          if (session) open.delete(session);
        }
      })) as T;
    } catch (err) {
      throw committing ? commitNotConfirmed(err) : err;
    }
    // Its failure aborted the transaction: PostgreSQL answered the COMMIT with a ROLLBACK.
    await last?.sent;
    return result;
  }
  // While tracing is on, a span from BEGIN to COMMIT around the transaction's statement spans.
  const traced = <T>(work: (tx: Tx) => Promise<T>, signal?: AbortSignal, options?: TransactionOptions) =>
    inSpan('transaction', transactionSpan, () => transaction(work, signal, options));
  const end = async (timeoutSeconds: number) => {
    await Promise.all([sql.end({ timeout: timeoutSeconds }), cancelPool?.end({ timeout: timeoutSeconds })]);
  };
  return { sql, db, transaction: isTracing() ? traced : transaction, end };
}

const transactionSpan = { kind: 'client', attributes: { 'db.system.name': 'postgresql' } } as const;

/**
 * Marks the transaction open until its end (a setting local to it), for openTransactionGuard: a
 * column of a statement the transaction sends anyway (the pooler's settings, the request's session),
 * else a statement of its own, sent with its last (sendLast).
 */
const markOpen = "set_config('floorline.transaction', 'open', true)";
const markOpenStatement: Query = { sql: `select ${markOpen}`, params: [] };

/**
 * True in a transaction of transaction() that is still open and sends a last statement with its
 * COMMIT (TransactionOptions.sendWithCommit), false (or null) anywhere else: after that COMMIT or
 * ROLLBACK, in another transaction, on another connection. What such a statement checks so that,
 * sent again by the driver after the COMMIT, it does nothing (insertRows' `withCommit`).
 */
export const openTransactionGuard = "current_setting('floorline.transaction', true) = 'open'";

/**
 * Sends `send`'s statement as the transaction's last, ahead of the COMMIT the driver sends once the
 * transaction's callback returns (TransactionOptions), the transaction marked open first if none of
 * its statements did. `sent`: its outcome, to await after the COMMIT. A statement that failed before
 * it reached the connection (its values could not be encoded) fails here, and the transaction rolls
 * back: the COMMIT would otherwise store the work without it.
 */
async function sendLast(
  tx: Tx,
  send: (tx: Tx) => Promise<unknown> | undefined,
  marked: boolean,
): Promise<{ sent: Promise<unknown> } | undefined> {
  // Its failure aborts the transaction, and with it the last statement's.
  if (!marked) runSql(tx, markOpenStatement, { atOnce: true }).catch(() => {});
  const before = sentAtOnce.get(tx) ?? 0;
  const sent = send(tx);
  if (!sent) return undefined;
  if (sentAtOnce.get(tx) === before) {
    await sent;
    throw new Error('sendWithCommit: its statement was not sent at once (runSql with atOnce)');
  }
  // Settled after the COMMIT (transaction); a COMMIT that fails leaves it unawaited.
  sent.catch(() => {});
  return { sent };
}

/** The statements runSql has handed to a transaction's connection at once (`atOnce`), for sendLast. */
const sentAtOnce = new WeakMap<Tx, number>();

/**
 * Each open transaction's (and savepoint's) own connection: the driver's transaction `sql`, on which
 * runSql sends hand-written statements prepared, without drizzle's builders.
 */
const connectionOf = new WeakMap<Tx, postgres.TransactionSql>();

/**
 * drizzle over a transaction the driver opened (`sql.begin`, `savepoint`), through drizzle's
 * documented proxy driver (`drizzle-orm/pg-proxy`): drizzle renders each builder's statement and maps
 * its rows, and the callback runs it on the transaction's connection as drizzle's own postgres.js
 * driver would (unprepared; rows as arrays for a selection). drizzle's own `transaction` keeps the
 * driver's connection to itself, so runSql then had to wrap each hand-written statement in drizzle's
 * select builder to prepare it, which cost a booking more of the web process's CPU than any other
 * single piece; knowing the connection, runSql sends it straight to the driver, prepared
 * (docs/architecture.md "Hot statements prepared").
 */
function transactionOver(connection: postgres.TransactionSql): Tx {
  const tx = drizzleOverCallback(async (text, params, method) => {
    const query = connection.unsafe(text, params as never[], { prepare: false });
    return { rows: method === 'all' ? await query.values() : await query };
  }, sessionOptions());
  connectionOf.set(tx, connection);
  return tx;
}

/**
 * Runs `work` in a savepoint of `tx`: its statements are undone alone when it throws (a row that
 * breaks a constraint, in a chunk that goes on). The one way to nest a transaction: runSql needs to
 * know the savepoint's connection (drizzle's own `tx.transaction` would hide it).
 */
export function savepoint<T>(tx: Tx, work: (sp: Tx) => Promise<T>): Promise<T> {
  const connection = connectionOf.get(tx);
  if (!connection) throw new Error('savepoint: not in a transaction opened by transaction() or savepoint()');
  return connection.savepoint((sp) => work(transactionOver(sp))) as Promise<T>;
}

/** Which backend runs `tx` (one statement, pipelined before the work's own), for cancelUntilEnded. */
function trackSession(open: OpenTransactions, tx: Tx, cancels: TransactionSession['cancels']): Promise<TransactionSession | null> {
  const session = runSql<{ pid: number; started: string }>(tx, sessionStatement).then(
    (rows) => ({ ...rows[0], cancels }),
    () => null,
  );
  open.add(session);
  return session;
}
// Its text as the driver takes it: nothing for drizzle to render in every request's transaction.
// It marks the transaction open as well (openTransactionGuard).
const sessionStatement: Query = {
  sql: `select pg_backend_pid() as pid, ((extract(epoch from now()) * 1000000)::bigint)::text as started, ${markOpen} as open`,
  params: [],
};

/** The options of the database `config` describes (DATABASE_URL, DATABASE_POOLER, …). */
export function databaseOptionsOf(config: Config): DatabaseOptions {
  return {
    url: config.DATABASE_URL,
    pooler: config.DATABASE_POOLER,
    poolSize: config.DB_POOL_SIZE,
    statementTimeoutMs: config.DATABASE_STATEMENT_TIMEOUT_MS,
  };
}

let processDatabase: Database | undefined;

/**
 * This process's database: the one its entry point (or a test file) gave useDatabase, else created
 * on first use from the process's configuration. Never created when this module is loaded.
 */
export function database(): Database {
  return (processDatabase ??= createDatabase(databaseOptionsOf(processConfig())));
}

/**
 * Makes `given` this process's database, before anything has used one: the composition root's,
 * built from the configuration it parsed, or a test file's own database.
 */
export function useDatabase(given: Database): void {
  if (processDatabase) throw new Error('the process database is already in use: call useDatabase before the first query');
  processDatabase = given;
}

/** drizzle over this process's pool. */
export function db(): Db {
  return database().db;
}
/** This process's driver pool (postgres.js), for statements drizzle does not build. */
export function pool(): ReturnType<typeof createPool> {
  return database().sql;
}
/** Opens a transaction on this process's database: see createDatabase (`signal`: the caller's, AuthContext.signal). */
export function transaction<T>(work: (tx: Tx) => Promise<T>, signal?: AbortSignal, options?: TransactionOptions): Promise<T> {
  return database().transaction(work, signal, options);
}

/**
 * A connection of its own for what needs a session (the live stream's LISTEN): DATABASE_DIRECT_URL,
 * which reaches PostgreSQL itself when DATABASE_URL is a transaction pooler. Opened on first use.
 */
let sessionPool: ReturnType<typeof postgres> | null = null;
export function sessionSql(): ReturnType<typeof postgres> {
  if (sessionPool) return sessionPool;
  const server = serverOptionsOf(processConfig().DATABASE_DIRECT_URL ?? processConfig().DATABASE_URL);
  sessionPool = postgres(server.url, {
    max: 1,
    onnotice: () => {},
    connect_timeout: 5,
    backoff: () => 0,
    // A LISTEN on a standby fails (not its connection), and the driver then drops the listener for
    // good: the connection is refused there instead, and the driver's re-LISTEN after a close tries
    // again until it reaches the primary (through HAProxy too, which may still route to the old one).
    target_session_attrs: 'primary',
    ...server.driver,
  });
  return sessionPool;
}

/**
 * Ends this process's connections: running statements get `timeoutSeconds`, then every connection
 * is closed whether PostgreSQL answers or not (a hung server or pooler cannot hold the stop).
 */
export async function closeConnections(timeoutSeconds: number): Promise<void> {
  await Promise.all([processDatabase?.end(timeoutSeconds), sessionPool?.end({ timeout: timeoutSeconds })]);
}

const dialect = new PgDialect();

/**
 * A hand-written statement built once, its values left as placeholders (`sql.placeholder`), run on
 * the pool as a prepared statement with the values of each call: for a statement on a hot path,
 * where building its text with drizzle at every call would cost more than running it. Values go to
 * the driver as given (write instants as ISO strings, and cast the placeholders in the SQL).
 */
export function prepareSql<T extends object>(built: SQL): (values: Record<string, unknown>) => Promise<T[]> {
  const query = renderOnce(built);
  return (values) => runSql<T>(db(), query, { values });
}

/**
 * Runs a hand-written statement (the engine's loads, its lock statements, the hot path's inserts:
 * insertRows) and returns its rows, straight on the driver (`unsafe`), prepared on the connection:
 * planned once per connection (for the engine's venue-day load, with eight configuration subqueries
 * and the day's bookings, that halved the cost of a booking against a statement parsed and planned
 * every time; for a booking's three inserts, see docs/architecture.md "Hot statements prepared").
 * On the pool or on a transaction's own connection (transactionOver), the rows come back alike, as
 * the driver reads them with drizzle's parsers (instants as PostgreSQL's text). `prepare: false`:
 * sent unprepared (a bulk write's many texts would each stay prepared on the connection). Behind a
 * transaction pooler nothing is prepared (createPool). Statements given together (Promise.all) are
 * pipelined on the connection. `built`: drizzle's `sql`, rendered at each call, or a statement's
 * text and parameters (a statement rendered once: renderOnce; insertRows' own). `values`: the
 * values of the statement's named placeholders. `atOnce`: handed to the connection before runSql
 * returns (the driver's `execute()`), not when first awaited: a transaction's last statement, which
 * must be queued ahead of the COMMIT the driver sends next (TransactionOptions.sendWithCommit).
 */
export async function runSql<T extends object>(
  conn: DbOrTx,
  built: SQL | Query,
  options: { prepare?: boolean; values?: Record<string, unknown>; atOnce?: boolean } = {},
): Promise<T[]> {
  const client = connectionOf.get(conn as Tx) ?? (conn as Db).$client;
  const query = is(built, SQL) ? dialect.sqlToQuery(built) : built;
  const params = options.values ? fillPlaceholders(query.params, options.values) : query.params;
  return traceStatement(query.sql, async () => {
    const sent = client.unsafe(query.sql, params as never[], { prepare: options.prepare ?? true });
    if (options.atOnce) sentAtOnce.set(conn as Tx, (sentAtOnce.get(conn as Tx) ?? 0) + 1);
    return (await (options.atOnce ? sent.execute() : sent)) as unknown as T[];
  });
}

/**
 * A hand-written statement built once, rendered once into its text and parameters, its values of
 * each call left as named placeholders (`sql.placeholder`): for runSql with `values` on a hot path.
 * drizzle renders a statement at every call, walking each nested `sql` fragment with entity checks
 * (`is()`) on each: runSql's rendering of a booking's statements was about 4 % of the web process's
 * samples while booking, and a sixth of what it allocated (docs/benchmarks.md).
 */
export function renderOnce(built: SQL): Query {
  return dialect.sqlToQuery(built);
}
