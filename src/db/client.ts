import { sql as sqlTag, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import { drizzle } from 'drizzle-orm/postgres-js';
import postgres from 'postgres';
import { config } from '../config.js';
import * as schema from './schema/index.js';

export const sql = postgres(config.DATABASE_URL, {
  max: config.DB_POOL_SIZE,
  onnotice: () => {},
  connect_timeout: 5,
  // Reconnect at once. The driver's default waits up to 20 s between attempts once a few have
  // failed, and the queries queued meanwhile wait with it: while PostgreSQL is down a request hung
  // instead of answering 503, and recovery waited for the next attempt. Attempts are made only for
  // queued queries (each takes one and fails it with the connection error), so this cannot spin.
  backoff: () => 0,
});

export const db = drizzle(sql, { schema });
export type Db = typeof db;
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
/** Either the pool or an open transaction: services take this so callers choose the boundary. */
export type DbOrTx = Db | Tx;

const dialect = new PgDialect();

/**
 * Runs a hand-written statement (the engine's loads, its lock statements) and returns its rows, as a
 * prepared statement: planned once per connection, where a statement drizzle's `execute` sends is
 * parsed and planned each time (for the engine's venue-day load that halved bookings per second). On
 * the pool it goes to the driver through drizzle's documented `db.$client`. In a transaction, whose
 * connection drizzle does not expose, it is the subquery of a prepared drizzle select that returns
 * each row as JSON: its columns must be JSON-safe (text, numbers, booleans, json), which the engine's
 * are. Statements given together (Promise.all) are still pipelined on the connection.
 */
export async function runSql<T>(conn: DbOrTx, statement: SQL): Promise<T[]> {
  if (conn === db) {
    const query = dialect.sqlToQuery(statement);
    return (await db.$client.unsafe(query.sql, query.params as never[], { prepare: true })) as unknown as T[];
  }
  const rows = await conn
    .select({ row: sqlTag<T>`to_json(q)` })
    .from(sqlTag`(${statement}) q`)
    .prepare('run_sql')
    .execute();
  return rows.map((r) => r.row);
}
