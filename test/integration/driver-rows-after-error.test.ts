import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';

// The driver (postgres 3.4.9) counted a result's rows in one counter per connection, reset only when
// a statement completed: a statement that failed after sending some rows left it where it was, and
// the next statement on that connection resolved with as many empty places before its own rows
// (upstream issues #1119 and #1181). patches/postgres+3.4.9.patch resets it when a statement fails
// or its connection closes. Found here as a valid API key answered 401 after a server was fenced
// read-only: the pool's statement that ends its own connections (src/db/client.ts) had sent a row
// per connection it ended before its own was ended, and the key's lookup came next.
const config = processConfig();
const sql = postgres(config.DATABASE_URL, { max: 1, onnotice: () => {} });

afterAll(async () => {
  await sql.end();
});

describe('the database driver after a statement that failed midway through its rows', () => {
  it('the next statement on the same connection resolves with its own rows only', async () => {
    // 3 rows are sent, then division by zero on the fourth; the second statement is pipelined behind it.
    const failing = sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch((err: Error) => err);
    const next = sql<{ x: number }[]>`select x from generate_series(1, 2) x`;
    expect(await failing).toBeInstanceOf(Error);
    const rows = await next;
    expect([rows.length, rows.count, rows.map((r) => r?.x)]).toEqual([2, 2, [1, 2]]);
  });

  it('the first statement after a connection ended midway through its rows resolves with its own rows only', async () => {
    const own = postgres(config.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      const [{ pid }] = await own<{ pid: number }[]>`select pg_backend_pid() as pid`;
      // Rows of 2 kB, one every 2 ms: the server sends them in 8 kB writes while the statement runs,
      // and the connection is ended (as the pool's own statement ends its connections) midway.
      const streaming = own`select i, repeat('x', 2000) as pad, pg_sleep(0.002) from generate_series(1, 1000) i`.catch((err: Error) => err);
      await new Promise((resolve) => setTimeout(resolve, 300));
      await sql`select pg_terminate_backend(${pid})`;
      expect(await streaming).toBeInstanceOf(Error);
      const rows = await own<{ x: number }[]>`select x from generate_series(1, 2) x`;
      expect([rows.length, rows.map((r) => r?.x)]).toEqual([2, [1, 2]]);
    } finally {
      await own.end({ timeout: 0 });
    }
  });
});
