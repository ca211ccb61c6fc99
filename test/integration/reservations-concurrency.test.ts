import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { reservations, reservationTables } from '../../src/db/schema/index.js';
import { localToInstant } from '../../src/lib/local-time.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { expectInvariantsHold } from '../support/invariants.js';
import { backendPid, untilBlockedBy } from '../support/lock-waits.js';
import { configureVenue, localDate, type VenueFixtureOptions } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);

/** Every venue of the file, for the invariant check at its end. */
const venueIds: string[] = [];

async function setup(options: VenueFixtureOptions) {
  const t = await createTenant();
  venueIds.push(t.venueId);
  const fixture = await configureVenue(t.venueId, options);
  return { ...t, fixture, api: client(server.url, t.key) };
}

const tally = (statuses: number[]) => statuses.reduce<Record<number, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

/** Runs `during` while another transaction holds an uncommitted occupancy of `tableId` at 19:00 tomorrow, then commits it. */
async function whileTableHeld<T>(venueId: string, organisationId: string, tableId: string, during: () => Promise<T>): Promise<T> {
  const startsAt = new Date(localToInstant('Europe/Rome', tomorrow, 19 * 60));
  const endsAt = new Date(startsAt.getTime() + 90 * 60_000);
  let pending!: Promise<T>;
  await db().transaction(async (tx) => {
    const [row] = await tx
      .insert(reservations)
      .values({
        organisationId,
        venueId,
        serviceDate: tomorrow,
        time: '19:00',
        startsAt,
        endsAt,
        partySize: 2,
        status: 'created',
        source: 'api',
        tableId,
        tableAssigned: true,
      })
      .returning();
    await tx
      .insert(reservationTables)
      .values({ reservationId: row.id, tableId, venueId, during: `[${startsAt.toISOString()},${endsAt.toISOString()})` });
    pending = during();
    // Committed only once the request has reached its occupancy insert and waits on this transaction.
    await untilBlockedBy(await backendPid(tx));
  });
  return pending;
}

describe('PostgreSQL keeps the floor consistent under concurrency', () => {
  it('20 concurrent bookings of the last free table: one 201, nineteen 409 no_availability', async () => {
    const { api, venueId, fixture } = await setup({ tables: [{ name: 'Last', minSeats: 1, maxSeats: 4 }] });
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, notes: `#${i}` }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 1, 409: 19 });
    for (const r of results.filter((r) => r.status === 409)) {
      expect(r.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'no_table' } });
    }
    const live = await db().select().from(reservationTables).where(eq(reservationTables.tableId, fixture.tableIds.Last));
    expect(live).toHaveLength(1);
    expect(await db().select().from(reservations).where(eq(reservations.venueId, venueId))).toHaveLength(1);
  });

  it('concurrent bookings against a pacing rule never exceed maxCovers', async () => {
    const tables = Array.from({ length: 12 }, (_, i) => ({ name: `T${String(i).padStart(2, '0')}`, minSeats: 1, maxSeats: 4 }));
    const { api, venueId } = await setup({ tables, pacing: [{ maxCovers: 7, windowMinutes: 30 }] });
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        api.post('/reservations', { venueId, serviceDate: tomorrow, time: i % 2 ? '19:00' : '19:15', partySize: 2 }),
      ),
    );
    expect(tally(results.map((r) => r.status))).toEqual({ 201: 3, 409: 9 });
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error.details.reason).toBe('pacing_full');
    const [{ covers }] = (await db().execute(
      sql`select coalesce(sum(party_size), 0)::int as covers from reservations where venue_id = ${venueId} and status not in ('cancelled', 'no_show')`,
    )) as unknown as { covers: number }[];
    expect(covers).toBeLessThanOrEqual(7);
    expect(covers).toBe(6);
  });

  it('concurrent PATCHes with the same If-Match: exactly one wins', async () => {
    const { api, venueId } = await setup({});
    const r = (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 })).body.reservation;
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.patch(`/reservations/${r.id}`, { notes: `writer ${i}` }, { 'if-match': `"${r.updatedAt}"` }),
      ),
    );
    expect(tally(results.map((x) => x.status))).toEqual({ 200: 1, 409: 9 });
    for (const x of results.filter((x) => x.status === 409))
      expect(x.body.error).toMatchObject({ code: 'conflict', details: { reason: 'version_mismatch' } });
  });

  it('an automatic assignment that loses the race takes the next table', async () => {
    const { api, venueId, organisationId, fixture } = await setup({
      tables: [
        { name: 'A', minSeats: 1, maxSeats: 2 },
        { name: 'B', minSeats: 1, maxSeats: 2 },
      ],
    });
    const res = await whileTableHeld(venueId, organisationId, fixture.tableIds.A, () =>
      api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 }),
    );
    expect(res.status).toBe(201);
    expect(res.body.reservation.table.tableId).toBe(fixture.tableIds.B);
  });

  it('an explicitly requested table that loses the race answers 409 no_availability, reason conflict', async () => {
    const { api, venueId, organisationId, fixture } = await setup({ tables: [{ name: 'A', minSeats: 1, maxSeats: 2 }] });
    const res = await whileTableHeld(venueId, organisationId, fixture.tableIds.A, () =>
      api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:30', partySize: 2, tableId: fixture.tableIds.A }),
    );
    expect(res.status).toBe(409);
    expect(res.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'conflict' } });
  });

  it('the exclusion constraint refuses two live overlapping occupancies of a table, whoever writes them', async () => {
    const { api, venueId, fixture } = await setup({ tables: [{ name: 'A', minSeats: 1, maxSeats: 4 }] });
    const first = (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 })).body.reservation;
    const second = (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '21:00', partySize: 2 })).body.reservation;
    const overlapping = `[${first.startsAt},${second.endsAt})`;
    await expect(
      db().update(reservationTables).set({ during: overlapping }).where(eq(reservationTables.reservationId, second.id)),
    ).rejects.toMatchObject({ cause: { code: '23P01' } });
    // A freed occupancy no longer counts.
    await api.delete(`/reservations/${first.id}`);
    const [moved] = await db()
      .update(reservationTables)
      .set({ during: overlapping })
      .where(eq(reservationTables.reservationId, second.id))
      .returning();
    expect(moved).toMatchObject({ tableId: fixture.tableIds.A, live: true });
  });

  it('after all of it, the invariant check (npm run cli -- check) counts nothing on these venues', async () => {
    await expectInvariantsHold(venueIds);
  });
});
