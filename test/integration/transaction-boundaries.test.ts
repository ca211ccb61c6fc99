import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, db, pool, transaction } from '../../src/db/client.js';
import { processConfig } from '../../src/config.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { countBlockedBy } from '../support/lock-waits.js';

/**
 * The two points where a request whose client has gone is refused (src/db/client.ts `transaction`):
 * before BEGIN and before COMMIT. The client leaves exactly there, so the outcome never depends on
 * timing; and a COMMIT that fails answers 503 with nothing stored.
 */
const probe = 'transaction_boundary_probe';

beforeAll(async () => {
  await db().execute(sql.raw(`create table if not exists ${probe} (id text primary key)`));
});

async function stored(id: string): Promise<boolean> {
  const rows = await db().execute<{ id: string }>(sql`select id from ${sql.raw(probe)} where id = ${id}`);
  return rows.length === 1;
}

/** Runs `work` as a request would, given its signal, with `leave` (its client leaving) callable from inside it. */
function asRequest<T>(work: (signal: AbortSignal, leave: () => void) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  return work(controller.signal, () => controller.abort());
}

describe('a transaction of a request whose client has gone', () => {
  it('does not begin when the client left before BEGIN', async () => {
    let began = false;
    const outcome = asRequest(async (signal, leave) => {
      leave();
      return transaction(async () => {
        began = true;
      }, signal);
    });
    await expect(outcome).rejects.toMatchObject({ code: '57014' });
    expect(began).toBe(false);
  });

  it('does not commit when the client left after its last statement, before COMMIT', async () => {
    const id = crypto.randomUUID();
    const outcome = asRequest((signal, leave) =>
      transaction(async (tx) => {
        await tx.execute(sql`insert into ${sql.raw(probe)} (id) values (${id})`);
        leave();
      }, signal),
    );
    await expect(outcome).rejects.toMatchObject({ code: '57014' });
    expect(await stored(id)).toBe(false);
  });

  it('commits when the client stays', async () => {
    const id = crypto.randomUUID();
    await asRequest((signal) => transaction((tx) => tx.execute(sql`insert into ${sql.raw(probe)} (id) values (${id})`), signal));
    expect(await stored(id)).toBe(true);
  });
});

describe('transactions whose clients have gone, holding every connection of the pool', () => {
  it('are cancelled while they wait on a lock: the cancel does not queue behind them for a connection', async () => {
    // A pool of two connections, both taken by transactions that wait for a row the test holds.
    const small = createDatabase({ url: processConfig().DATABASE_URL, pooler: 'none', poolSize: 2, statementTimeoutMs: 0 });
    const id = crypto.randomUUID();
    await db().execute(sql`insert into ${sql.raw(probe)} (id) values (${id})`);
    const holder = await pool().reserve();
    try {
      const [{ pid: holderPid }] = await holder<Array<{ pid: number }>>`select pg_backend_pid() as pid`;
      await holder`begin`;
      await holder`select id from ${holder(probe)} where id = ${id} for update`;
      const requests = [0, 1].map(() => {
        const controller = new AbortController();
        const result = small.transaction(
          (tx) => tx.execute(sql`select id from ${sql.raw(probe)} where id = ${id} for update`),
          controller.signal,
        );
        return { result, cancel: () => controller.abort() };
      });
      const waiting = () => countBlockedBy(holderPid, pool());
      for (let tries = 0; (await waiting()) < 2; tries++) {
        if (tries > 250) throw new Error('the two transactions never waited on the lock');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const left = performance.now();
      for (const request of requests) request.cancel();
      // Both end while the lock is still held: the cancels reached PostgreSQL.
      const outcomes = await Promise.race([
        Promise.allSettled(requests.map((r) => r.result)),
        new Promise<'still waiting'>((resolve) => setTimeout(() => resolve('still waiting'), 3000)),
      ]);
      expect(outcomes === 'still waiting' ? outcomes : outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect(performance.now() - left).toBeLessThan(2000);
      expect(await waiting()).toBe(0);
    } finally {
      await holder`rollback`;
      holder.release();
      await small.end(1);
    }
  });
});

describe('a COMMIT that fails', () => {
  const server = useTestServer();
  const marker = 'refused at commit (transaction-boundaries test)';
  beforeAll(async () => {
    // A deferred constraint trigger: PostgreSQL runs it at COMMIT, after every statement succeeded.
    await db().execute(
      sql.raw(`
      create or replace function refuse_marked_reservation() returns trigger language plpgsql as $$
      begin
        if new.notes = '${marker}' then raise exception 'refused at commit'; end if;
        return null;
      end $$;
      drop trigger if exists refuse_marked_reservation on reservations;
      create constraint trigger refuse_marked_reservation after insert on reservations
        deferrable initially deferred for each row execute function refuse_marked_reservation();`),
    );
  });
  afterAll(async () => {
    await db().execute(
      sql.raw(`drop trigger if exists refuse_marked_reservation on reservations; drop function if exists refuse_marked_reservation()`),
    );
  });

  it('answers 503 unavailable, never 2xx, and stores nothing', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const res = await api.post('/reservations', {
      venueId: t.venueId,
      serviceDate: localDate(2),
      time: '19:00',
      partySize: 2,
      notes: marker,
    });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('unavailable');
    expect((await api.get(`/reservations?venueId=${t.venueId}`)).body.data).toEqual([]);
    // Anything else still books.
    expect((await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2 })).status).toBe(
      201,
    );
  });
});
