import { sql } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { createDatabase, db, runSql } from '../../src/db/client.js';
import { createReadReplica } from '../../src/db/read-replica.js';
import { freePort } from '../support/free-port.js';

/**
 * DATABASE_POOLER=transaction without a pooler in front: what such a database sends is checked on
 * PostgreSQL itself (the run against PgBouncer is `npm run topologies:postgres`).
 */
describe('a database behind a transaction pooler (DATABASE_POOLER=transaction)', () => {
  const pooled = createDatabase({ url: processConfig().DATABASE_URL, pooler: 'transaction', poolSize: 1, statementTimeoutMs: 1234 });
  afterAll(() => pooled.sql.end());

  it('sets the statement timeout inside each transaction, not on the session', async () => {
    const inside = await pooled.transaction((tx) =>
      runSql<{ statement_timeout: string }>(tx, sql`select current_setting('statement_timeout') as statement_timeout`),
    );
    expect(inside[0].statement_timeout).toBe('1234ms');
    // The same (only) connection, outside a transaction: the session keeps the server's default.
    const [outside] = await pooled.sql<{ statement_timeout: string }[]>`show statement_timeout`;
    expect(outside.statement_timeout).not.toBe('1234ms');
  });

  it('prepares no named statement, even where the project asks for one', async () => {
    await runSql(pooled.db, sql`select ${1}::int as n`);
    await pooled.sql`select ${2}::int as n`;
    await pooled.transaction((tx) => runSql(tx, sql`select ${3}::int as n`));
    const [{ count }] = await pooled.sql<{ count: number }[]>`select count(*)::int as count from pg_prepared_statements`;
    expect(count).toBe(0);
  });
});

describe('reads that tolerate lag (DATABASE_READ_URL)', () => {
  it('go to the primary when the replica does not answer, and the gauge says so', async () => {
    const replica = createReadReplica({
      url: `postgres://postgres@127.0.0.1:${await freePort()}/postgres`,
      maxLagMs: 5000,
      pooler: 'none',
      poolSize: 1,
      statementTimeoutMs: 1000,
      primary: db(),
    });
    try {
      const [{ primary }] = await replica.read((conn) =>
        runSql<{ primary: boolean }>(conn, sql`select not pg_is_in_recovery() as primary`),
      );
      expect(primary).toBe(true);
      expect(replica.lagSeconds()).toBeNull();
    } finally {
      await replica.end(1);
    }
  });

  it('stay on the primary when DATABASE_READ_URL is not a standby', async () => {
    // PostgreSQL itself is no standby: pg_last_wal_replay_lsn() is null there, so the replica is refused.
    const notAReplica = createReadReplica({
      url: processConfig().DATABASE_URL,
      maxLagMs: 5000,
      pooler: 'none',
      poolSize: 1,
      statementTimeoutMs: 1000,
      primary: db(),
    });
    try {
      const conn = await notAReplica.choose();
      expect(conn).toBe(db());
    } finally {
      await notAReplica.end(1);
    }
  });
});
