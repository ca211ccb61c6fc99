import { pool } from '../../db/client.js';

/** Tables analysed by one run at most, the most changed first: the rest wait for the next run. */
const tablesPerRun = 10;

/**
 * Every minute: ANALYZE the tables whose rows changed by more than autovacuum's default analyze rule
 * (50 rows plus 10 % of the table) since their last analysis, when the server's autovacuum is off
 * (with it on, autovacuum does this). Why it matters: every hot statement is prepared per connection,
 * and PostgreSQL keeps a prepared statement's plan until the statistics of its tables change. A
 * connection that prepared the booking's day read while `reservations` was nearly empty keeps an
 * index that scans every reservation of the venue (measured: 970 buffers per booking for 48 rows
 * after a minute of bookings, against 140 once analysed), and on a server without autovacuum nothing
 * else ever replans it. An ANALYZE takes no lock that writers or readers wait for and samples at most
 * 30,000 rows, so its cost does not grow with the table (docs/operations.md "Timers").
 * Returns the tables analysed. `sql`: the database to look at (this process's by default).
 */
export async function analyzeChangedTables(sql: ReturnType<typeof pool> = pool()): Promise<string[]> {
  const changed = await sql<Array<{ name: string }>>`
    select format('%I.%I', schemaname, relname) as name from pg_stat_user_tables
    where current_setting('autovacuum') = 'off' and n_mod_since_analyze > 50 + 0.1 * n_live_tup
    order by n_mod_since_analyze desc
    limit ${tablesPerRun}`;
  for (const { name } of changed) await sql.unsafe(`analyze ${name}`);
  return changed.map((table) => table.name);
}
