import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, runSql, savepoint, transaction } from '../../src/db/client.js';
import { createTenant } from '../support/harness.js';

type Row = { name: string; seats: number; open: boolean; config: { a: number[] } | null; missing: string | null };

describe('runSql', () => {
  const statement = (venueId: string) =>
    sql`select v.name, 4::int as seats, true as open, json_build_object('a', json_build_array(1, 2)) as config, null::text as missing
        from venues v where v.id = ${venueId}`;

  it('returns the same rows on the pool and inside a transaction', async () => {
    const t = await createTenant();
    const onPool = await runSql<Row>(db(), statement(t.venueId));
    const inTransaction = await transaction((tx) => runSql<Row>(tx, statement(t.venueId)));
    expect(onPool).toHaveLength(1);
    expect(inTransaction).toEqual(onPool);
    expect(onPool[0]).toMatchObject({ seats: 4, open: true, config: { a: [1, 2] }, missing: null });
  });

  it("runs on the transaction's own connection: it sees the transaction's uncommitted writes", async () => {
    const t = await createTenant();
    const seen: { name?: string; pid?: number; drizzlePid?: number } = {};
    const rolledBack = new Error('roll back');
    await expect(
      transaction(async (tx) => {
        await tx.execute(sql`update venues set name = 'Renamed inside' where id = ${t.venueId}`);
        seen.name = (await runSql<Row>(tx, statement(t.venueId)))[0].name;
        seen.pid = (await runSql<{ pid: number }>(tx, sql`select pg_backend_pid() as pid`))[0].pid;
        seen.drizzlePid = (await tx.execute<{ pid: number }>(sql`select pg_backend_pid() as pid`))[0].pid;
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect(seen.name).toBe('Renamed inside');
    expect(seen.pid).toBe(seen.drizzlePid);
    const [after] = await runSql<Row>(db(), statement(t.venueId));
    expect(after.name).not.toBe('Renamed inside');
  });

  it("is a prepared statement on the transaction's connection, planned once per connection", async () => {
    const t = await createTenant();
    const prepared = await transaction(async (tx) => {
      await runSql<Row>(tx, statement(t.venueId));
      return tx.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_prepared_statements where statement like 'select v.name, 4::int as seats%from venues v%'`,
      );
    });
    expect(prepared[0].n).toBe(1);
  });

  it("runs in a savepoint on the savepoint's connection; drizzle's own nested transaction, which would hide it, is refused", async () => {
    const t = await createTenant();
    const rolledBack = new Error('roll back the savepoint');
    const names = await transaction(async (tx) => {
      await expect(
        savepoint(tx, async (sp) => {
          await sp.execute(sql`update venues set name = 'In the savepoint' where id = ${t.venueId}`);
          expect((await runSql<Row>(sp, statement(t.venueId)))[0].name).toBe('In the savepoint');
          throw rolledBack;
        }),
      ).rejects.toBe(rolledBack);
      await expect(tx.transaction(async () => {})).rejects.toThrow(/not supported/);
      return runSql<Row>(tx, statement(t.venueId));
    });
    expect(names[0].name).not.toBe('In the savepoint');
  });
});
