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
