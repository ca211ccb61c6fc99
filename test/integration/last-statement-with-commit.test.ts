import { jsonb, pgTable, text } from 'drizzle-orm/pg-core';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, pool, runSql, type Database, type Tx } from '../../src/db/client.js';
import { insertRows } from '../../src/db/insert-rows.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { useOwnDatabase } from '../support/own-database.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

/**
 * A transaction's last statement travels with its COMMIT (src/db/client.ts, TransactionOptions): a
 * booking's events do, a round trip fewer. What must hold: the work is stored only with that
 * statement, whether the statement fails in the transaction, fails before it reaches the
 * connection, or is sent again by the driver after the COMMIT (a prepared statement that failed for
 * a replanning reason), where it must store nothing. A database of this file alone: its tests change
 * the type of a column under prepared statements, the events table's included.
 */
const own = await useOwnDatabase('lastwc');
const server = useTestServer();

const probe = pgTable('last_statement_probe', { id: text('id').primaryKey(), kind: text('kind'), data: jsonb('data') });
const workRows = 'last_statement_work';

let small: Database;
/** The statements `small`'s one connection sent, as the driver sent them (its `debug` hook). */
const sent: string[] = [];
let checks: postgres.Sql;

beforeAll(async () => {
  checks = postgres(own.url, { max: 1, onnotice: () => {} });
  await checks.unsafe(`create table last_statement_probe (id text primary key, kind text, data jsonb)`);
  await checks.unsafe(`create table ${workRows} (id text primary key)`);
  // One connection: the statement prepared once is the one the next transaction sends.
  small = createDatabase({ url: own.url, pooler: 'none', poolSize: 1, statementTimeoutMs: 0, onStatement: (t) => sent.push(t.trim()) });
});

afterAll(async () => {
  await small?.end(1);
  await checks?.end();
  await pool().end();
  await own.drop();
});

const stored = async (table: string, id: string) => (await checks.unsafe(`select 1 from ${table} where id = $1`, [id])).length === 1;

/** A transaction of `small` that writes `workId` and sends `last` with its COMMIT. */
function writeWith(workId: string, last: (tx: Tx) => Promise<unknown>) {
  return small.transaction((tx) => runSql(tx, { sql: `insert into ${workRows} (id) values ($1)`, params: [workId] }), undefined, {
    sendWithCommit: last,
  });
}
const insertProbe = (tx: Tx, id: string, extra: Partial<typeof probe.$inferInsert> = {}) =>
  insertRows(tx, probe, [{ id, kind: 'k', ...extra }], { withCommit: true, returning: ['id', 'kind'] });

describe('a transaction whose last statement travels with its COMMIT', () => {
  it('stores the work and the statement together', async () => {
    const [work, last] = [crypto.randomUUID(), crypto.randomUUID()];
    await writeWith(work, (tx) => insertProbe(tx, last));
    expect([await stored(workRows, work), await stored('last_statement_probe', last)]).toEqual([true, true]);
    // Sent after the work, with the COMMIT behind it.
    expect(sent.slice(-2).map((s) => s.split(' ')[0])).toEqual(['insert', 'commit']);
  });

  it('rolls the work back when the statement fails (PostgreSQL answers that COMMIT with a ROLLBACK), and rejects with its error', async () => {
    const taken = crypto.randomUUID();
    await checks.unsafe(`insert into last_statement_probe (id) values ($1)`, [taken]);
    const work = crypto.randomUUID();
    await expect(writeWith(work, (tx) => insertProbe(tx, taken))).rejects.toMatchObject({ code: '23505' });
    expect(await stored(workRows, work)).toBe(false);
  });

  it('rolls the work back when the statement fails before it reaches the connection (a value it cannot encode)', async () => {
    const work = crypto.randomUUID();
    // JSON.stringify refuses a BigInt: insertRows fails while it builds its statement.
    await expect(writeWith(work, (tx) => insertProbe(tx, crypto.randomUUID(), { data: { n: 1n } }))).rejects.toThrow(/BigInt/);
    expect(await stored(workRows, work)).toBe(false);
  });

  it('stores nothing when the driver sends the statement again after the COMMIT: the work rolled back, the statement refused outside it', async () => {
    // Prepared on the connection, then its result's type changed: the next run fails to replan
    // ("cached plan must not change result type"), which the driver answers by sending it again.
    await writeWith(crypto.randomUUID(), (tx) => insertProbe(tx, crypto.randomUUID()));
    await checks.unsafe(`alter table last_statement_probe alter column kind type varchar(40)`);
    const [work, last] = [crypto.randomUUID(), crypto.randomUUID()];
    sent.length = 0;
    await expect(writeWith(work, (tx) => insertProbe(tx, last))).rejects.toMatchObject({ code: '0A000' });
    // The driver did send it again, after the COMMIT: only the guard kept its row out.
    expect(sent.map((s) => s.split(' ')[0]).slice(-3)).toEqual(['insert', 'commit', 'insert']);
    expect([await stored(workRows, work), await stored('last_statement_probe', last)]).toEqual([false, false]);
    // Replanned, the next one goes through.
    const [work2, last2] = [crypto.randomUUID(), crypto.randomUUID()];
    await writeWith(work2, (tx) => insertProbe(tx, last2));
    expect([await stored(workRows, work2), await stored('last_statement_probe', last2)]).toEqual([true, true]);
  });

  it('without the guard, that statement sent again would store its row alone (what the guard is for)', async () => {
    const unguarded = (tx: Tx, id: string) =>
      runSql(
        tx,
        { sql: 'insert into last_statement_probe (id, kind) values ($1, $2) returning id, kind', params: [id, 'k'] },
        { atOnce: true },
      );
    await writeWith(crypto.randomUUID(), (tx) => unguarded(tx, crypto.randomUUID()));
    await checks.unsafe(`alter table last_statement_probe alter column kind type varchar(50)`);
    const [work, last] = [crypto.randomUUID(), crypto.randomUUID()];
    await writeWith(work, (tx) => unguarded(tx, last));
    expect([await stored(workRows, work), await stored('last_statement_probe', last)]).toEqual([false, true]);
  });
});

describe("a booking whose event's insert is sent again after its COMMIT", () => {
  it('answers 500 with nothing stored, never 201; an event is never left without its reservation; the next booking is stored with its event', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    // Each on a day of its own: nothing but the insert's replanning refuses one.
    let day = 2;
    const book = () => api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(day++), time: '19:00', partySize: 2 });
    // The event's insert prepared on the connections that book.
    for (let i = 0; i < 3; i++) expect((await book()).status).toBe(201);
    const eventsBefore = Number((await checks`select count(*) from events`)[0].count);
    // Its returned `type` changes type: each connection's prepared insert fails once, and is sent again.
    await checks.unsafe(`alter table events alter column type type varchar(100)`);
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await book()).status);
    expect(
      statuses.every((s) => s === 201 || s === 500),
      statuses.join(),
    ).toBe(true);
    expect(statuses).toContain(500);
    expect(statuses.at(-1)).toBe(201);
    const [{ n: reservations }] = await checks`select count(*)::int as n from reservations where venue_id = ${t.venueId}`;
    expect(reservations).toBe(3 + statuses.filter((s) => s === 201).length);
    const orphans =
      await checks`select count(*)::int as n from events e where e.subject_type = 'reservation' and not exists (select 1 from reservations r where r.id = e.subject_id)`;
    expect(orphans[0].n).toBe(0);
    const eventsAfter = Number((await checks`select count(*) from events`)[0].count);
    expect(eventsAfter - eventsBefore).toBe(statuses.filter((s) => s === 201).length);
  });
});
