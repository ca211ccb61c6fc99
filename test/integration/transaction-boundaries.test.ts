import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db, runCancellable, transaction } from '../../src/db/client.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

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

/** Runs `work` as a request would, with `leave` (its client leaving) callable from inside it. */
function asRequest<T>(work: (leave: () => void) => Promise<T>): Promise<T> {
  let leave: () => void = () => {};
  const { result, cancel } = runCancellable(async () => {
    await Promise.resolve();
    return work(() => leave());
  });
  leave = cancel;
  return result;
}

describe('a transaction of a request whose client has gone', () => {
  it('does not begin when the client left before BEGIN', async () => {
    let began = false;
    const outcome = asRequest(async (leave) => {
      leave();
      return transaction(async () => {
        began = true;
      });
    });
    await expect(outcome).rejects.toMatchObject({ code: '57014' });
    expect(began).toBe(false);
  });

  it('does not commit when the client left after its last statement, before COMMIT', async () => {
    const id = crypto.randomUUID();
    const outcome = asRequest((leave) =>
      transaction(async (tx) => {
        await tx.execute(sql`insert into ${sql.raw(probe)} (id) values (${id})`);
        leave();
      }),
    );
    await expect(outcome).rejects.toMatchObject({ code: '57014' });
    expect(await stored(id)).toBe(false);
  });

  it('commits when the client stays', async () => {
    const id = crypto.randomUUID();
    await asRequest(() => transaction((tx) => tx.execute(sql`insert into ${sql.raw(probe)} (id) values (${id})`)));
    expect(await stored(id)).toBe(true);
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
