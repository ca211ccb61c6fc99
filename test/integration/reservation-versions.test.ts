import { describe, expect, it } from 'vitest';
import { pool } from '../../src/db/client.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

/**
 * A venue's reservation version (migrations 0012, 0013, 0034) is what tells every process that the
 * reservations it keeps in memory are stale: bumped at commit by each transaction that wrote the
 * venue's reservations or their tables, once per transaction however many rows it wrote, since the
 * writers of a venue queue on that row while they commit.
 */
const server = useTestServer();

async function versionOf(venueId: string): Promise<number> {
  const [row] = await pool().unsafe<Array<{ version: string }>>('select version::text from reservation_versions where venue_id = $1', [
    venueId,
  ]);
  return Number(row?.version ?? 0);
}

describe("a venue's reservation version", () => {
  it('moves once per writing transaction: a booking with its table, two parties changed together, a rollback not at all', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const book = async (time: string) => {
      const res = await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(2), time, partySize: 2 });
      expect(res.status, res.text).toBe(201);
      expect(res.body.reservation.table.tables).toHaveLength(1);
      return res.body.reservation.id as string;
    };
    const first = await book('19:00');
    const start = await versionOf(t.venueId);
    // The reservation's row and its table's row: two rows, one transaction.
    const second = await book('20:00');
    expect(await versionOf(t.venueId)).toBe(start + 1);
    // Two reservations and their tables in one transaction.
    await pool().begin(async (tx) => {
      await tx.unsafe(`update reservations set notes = 'moved' where id in ('${first}', '${second}')`);
      await tx.unsafe(`update reservation_tables set live = live where reservation_id in ('${first}', '${second}')`);
    });
    expect(await versionOf(t.venueId)).toBe(start + 2);
    await pool()
      .begin(async (tx) => {
        await tx.unsafe(`update reservations set notes = 'gone' where id = '${first}'`);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect(await versionOf(t.venueId)).toBe(start + 2);
    // Each transaction its own bump.
    await pool().unsafe(`update reservations set notes = 'a' where id = '${first}'`);
    await pool().unsafe(`update reservations set notes = 'b' where id = '${first}'`);
    expect(await versionOf(t.venueId)).toBe(start + 4);
  });
});
