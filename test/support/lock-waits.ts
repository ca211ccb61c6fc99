import { sql } from 'drizzle-orm';
import type { Sql } from 'postgres';
import { db, type Db } from '../../src/db/client.js';
import { eventually } from './eventually.js';

/** The backend of a transaction: pass its `tx` (or any executor of the same connection). */
export async function backendPid(tx: Pick<Db, 'execute'>): Promise<number> {
  const [row] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
  return row.pid;
}

/**
 * How many statements of this database wait for a lock that the backend `holderPid` holds, directly
 * or queued behind another waiter of it (PostgreSQL reports the second as blocked by the first
 * only): the concurrent requests under test that have reached the holder. Lock waits of other test
 * files in the same database do not count. `session`: where to ask, a connection of the test's own
 * when the pool under test may be full of the waiters.
 */
export async function countBlockedBy(holderPid: number, session: Sql = db().$client): Promise<number> {
  const [row] = await session<{ count: number }[]>`
    select count(*)::int as count from pg_stat_activity a
    where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock' and state = 'active'
      and (${holderPid}::int = any(pg_blocking_pids(a.pid))
        or exists (select 1 from unnest(pg_blocking_pids(a.pid)) b where ${holderPid}::int = any(pg_blocking_pids(b))))`;
  return row.count;
}

/**
 * Resolves once another session of this database waits for a lock that the backend `holderPid`
 * holds: the concurrent request under test has reached the point where it must wait for the holder.
 */
export async function untilBlockedBy(holderPid: number, timeoutMs = 20_000): Promise<void> {
  await eventually(async () => (await countBlockedBy(holderPid)) > 0, timeoutMs, `a session waiting for backend ${holderPid}`);
}
