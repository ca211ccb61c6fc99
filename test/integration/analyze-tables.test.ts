import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeChangedTables } from '../../src/services/timers/analyze-tables.js';
import { eventually } from '../support/eventually.js';
import { createOwnDatabase, type OwnDatabase } from '../support/own-database.js';

// The shape of the booking's day read (src/services/availability/venue-day-loader.ts): indexes that lead
// with the venue, one of them then with the day.
const table = `analyze_probe_${randomUUID().slice(0, 8)}`;
const someVenue = '00000000-0000-4000-8000-000000000001';
/**
 * A database of this file's own: the timers other files run call the same task on the run's database
 * every minute, and one of them analysed the probe table between its bulk insert and the check that
 * nothing replans it (seen with a second suite beside).
 */
let own: OwnDatabase;
let sql: postgres.Sql;
/** One connection that keeps its prepared statement, as a pooled connection of the API does. */
let connection: postgres.Sql;
beforeAll(async () => {
  own = await createOwnDatabase('analyze');
  sql = postgres(own.url, { max: 2, onnotice: () => {} });
  connection = postgres(own.url, { max: 1, onnotice: () => {} });
}, 60_000);

afterAll(async () => {
  await connection.end();
  await sql.end();
  await own.drop();
});

async function indexOfDayRead(): Promise<string> {
  const [row] = await connection.unsafe(`explain (format json) execute day_read('${someVenue}', '2026-03-01')`);
  const plan = JSON.stringify(row['QUERY PLAN']);
  return /"Index Name":"([^"]+)"/.exec(plan)?.[1] ?? plan;
}

/** The table's changes since its last analysis, as PostgreSQL's statistics system shows them (backends report them within about a second). */
async function changesOf(name: string): Promise<number> {
  const [row] = await sql<
    Array<{ n: number }>
  >`select coalesce(max(n_mod_since_analyze), 0)::int as n from pg_stat_user_tables where relname = ${name}`;
  return row.n;
}

describe('analyze-tables timer task', () => {
  it('replaces the plan a connection prepared while the table was nearly empty, on a server without autovacuum', async () => {
    // The reservations table's own columns and indexes, its NOT NULLs dropped so that a few columns make a row.
    await sql.unsafe(`create table ${table} (like reservations including defaults including indexes)`);
    const required = await sql<
      Array<{ name: string }>
    >`select attname as name from pg_attribute where attrelid = ${table}::regclass and attnum > 0 and attnotnull and attname <> 'id'`;
    for (const { name } of required) await sql.unsafe(`alter table ${table} alter column ${name} drop not null`);
    const addRows = (count: number, days: number) =>
      sql.unsafe(
        `insert into ${table} (id, venue_id, service_date, status) select gen_random_uuid(), '${someVenue}', date '2026-01-01' + g % ${days}, 'confirmed' from generate_series(1, ${count}) g`,
      );
    await addRows(20, 3);
    // Prepared on 20 rows with the generic plan, as a pooled connection's statement is after its first runs.
    await connection.unsafe(`set plan_cache_mode = force_generic_plan`);
    await connection.unsafe(
      `prepare day_read(uuid, date) as select id from ${table} where venue_id = $1 and service_date between $2::date - 1 and $2::date + 1 and status not in ('cancelled', 'no_show')`,
    );
    const before = await indexOfDayRead();
    const [{ dayIndex }] = await sql<
      Array<{ dayIndex: string }>
    >`select indexname as "dayIndex" from pg_indexes where tablename = ${table} and indexdef like '%(venue_id, service_date)'`;
    // Two years of a venue's days: the day is now what narrows the read.
    await addRows(20_000, 700);
    await eventually(async () => (await changesOf(table)) >= 20_000, 10_000, 'the added rows counted');
    // Nothing replans it while the statistics stay as they were.
    expect(await indexOfDayRead()).toBe(before);

    const [{ autovacuum }] = await sql<Array<{ autovacuum: string }>>`select current_setting('autovacuum') as autovacuum`;
    const analysed = await analyzeChangedTables(sql);
    if (autovacuum === 'on') {
      // Autovacuum's own analyze does this on such a server; the task leaves it alone.
      expect(analysed).toEqual([]);
      return;
    }
    expect(before).not.toBe(dayIndex);
    expect(analysed).toContain(`public.${table}`);
    expect(await indexOfDayRead()).toBe(dayIndex);
    // Analysed: its changes are counted from zero again, and the next run leaves it.
    expect(await analyzeChangedTables(sql)).not.toContain(`public.${table}`);
  });
});
