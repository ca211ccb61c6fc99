import { sql } from 'drizzle-orm';
import { db } from '../../src/db/client.js';
import { eventually } from './eventually.js';

/** The backend of a transaction: pass its `tx` (or any executor of the same connection). */
export async function backendPid(tx: Pick<typeof db, 'execute'>): Promise<number> {
  const [row] = await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`);
  return row.pid;
}

/**
 * Resolves once another session of this database waits for a lock that the backend `holderPid`
 * holds: the concurrent request under test has reached the point where it must wait for the holder.
 */
export async function untilBlockedBy(holderPid: number, timeoutMs = 20_000): Promise<void> {
  await eventually(
    async () => {
      const rows = await db.execute(sql`
        select 1 from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and ${holderPid}::int = any(pg_blocking_pids(pid))`);
      return rows.length > 0;
    },
    timeoutMs,
    `a session waiting for backend ${holderPid}`,
  );
}
