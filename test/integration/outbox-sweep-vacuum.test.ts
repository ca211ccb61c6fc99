import { randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { pool } from '../../src/db/client.js';
import { closeQueues } from '../../src/queues/queues.js';
import { sequenceEvents } from '../../src/services/outbox/event-sequencer.js';
import { sweepOutbox } from '../../src/services/outbox/sweep-outbox.js';
import { eventually } from '../support/eventually.js';
import { useFileSettings, useOwnQueuePrefix } from '../support/file-settings.js';
import { useOwnDatabase } from '../support/own-database.js';

// A queue prefix of this file alone, and a statement timeout short enough to run into.
useOwnQueuePrefix('sweep-vacuum');
useFileSettings({ DATABASE_STATEMENT_TIMEOUT_MS: '3000' });
// A database of its own: the sweep numbers every organisation of its database, and another file's
// sweeper (a timers role) numbering this test's organisation held its lock, so that this sweep left
// it to that run and resolved instead of running into the timeout.
const own = await useOwnDatabase('sweep-vacuum');
const sql = pool();

const other = postgres(own.url, { max: 1, onnotice: () => {} });
afterAll(async () => {
  await other.end();
  await closeQueues();
  await sql.end();
  await own.drop();
});

/** How many times the numbering queue was vacuumed by hand (the sweep's VACUUM; autovacuum's counts apart). */
const vacuums = async () =>
  (await sql<Array<{ n: number }>>`select vacuum_count::int as n from pg_stat_user_tables where relname = 'unsequenced_events'`)[0].n;
/** The vacuum count once it has grown past `before` (statistics reach pg_stat_user_tables within about a second). */
const vacuumedSince = (before: number) =>
  eventually(
    async () => {
      const n = await vacuums();
      return n > before && n;
    },
    10_000,
    'the vacuum counted',
  );

describe('outbox sweep', () => {
  it('vacuums the numbering queue, which autovacuum may never reach', async () => {
    const before = await vacuums();
    await sweepOutbox();
    expect(await vacuumedSince(before)).toBeGreaterThan(before);
  });

  it(
    'vacuums the numbering queue even when its numbering fails (a bulk left dead rows that made numbering time out)',
    { timeout: 60_000 },
    async () => {
      const organisationId = randomUUID();
      // Dead rows of a numbered bulk, and one event still to number, committed a minute ago.
      await sql`insert into unsequenced_events (organisation_id, created_at, event_id) select ${organisationId}, now() - interval '1 minute', gen_random_uuid() from generate_series(1, 2000)`;
      await sql`delete from unsequenced_events where organisation_id = ${organisationId}`;
      await sql`insert into unsequenced_events (organisation_id, created_at, event_id) values (${organisationId}, now() - interval '1 minute', gen_random_uuid())`;
      const before = await vacuums();
      // The numbering cannot write positions while another transaction holds this lock: it runs into the
      // statement timeout (3 s here), as the bulk's dead rows made it do.
      // Held from before the sweep until it has failed, however long either takes.
      let markLocked!: () => void;
      let unlock!: () => void;
      const locked = new Promise<void>((resolve) => (markLocked = resolve));
      const unlocked = new Promise<void>((resolve) => (unlock = resolve));
      const released = other.begin(async (tx) => {
        await tx`lock table event_positions in share mode`;
        markLocked();
        await unlocked;
      });
      await locked;
      try {
        await expect(sweepOutbox()).rejects.toThrow(/statement timeout/);
      } finally {
        unlock();
      }
      await released;
      expect(await vacuumedSince(before)).toBeGreaterThan(before);
      // Once the lock is gone the event is numbered.
      await sequenceEvents(organisationId);
      const [{ left }] = await sql<
        Array<{ left: number }>
      >`select count(*)::int as left from unsequenced_events where organisation_id = ${organisationId}`;
      expect(left).toBe(0);
    },
  );
});
