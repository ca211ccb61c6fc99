import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { events } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { handleImportJob } from '../../src/roles/import-handler.js';
import { importJob, type ImportJob } from '../../src/jobs/import-job.js';
import { startJobWorker, type RunningWorker } from '../../src/queues/start-worker.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { waitForImport } from '../support/imports.js';
import { expectInvariantsHold } from '../support/invariants.js';
import { configureVenue, localDate, type TableFixture } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: the imports of this file are taken by its own worker only.
useOwnQueuePrefix('pace');

const server = useTestServer();
let worker: RunningWorker<ImportJob>;
beforeAll(async () => {
  worker = startJobWorker(importJob, handleImportJob, { concurrency: 1 });
});
afterAll(async () => {
  await worker.close();
  await closeQueues();
});

const tomorrow = localDate(1);
const sixes = (...names: string[]): TableFixture[] => names.map((name) => ({ name, minSeats: 1, maxSeats: 6 }));

/** The venue: one pacing rule of 10 covers per 30 minutes on dinner. */
async function setup(tables: TableFixture[]) {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId, { tables, pacing: [{ maxCovers: 10, windowMinutes: 30 }] });
  const api = client(server.url, t.key);
  const book = async (time: string, partySize: number, extra: Record<string, unknown> = {}) => {
    const res = await api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time, partySize, ...extra });
    expect(res.status, res.text).toBe(201);
    return res.body.reservation;
  };
  const patch = (id: string, body: Record<string, unknown>) => api.patch(`/reservations/${id}`, body);
  return { ...t, fixture, api, book, patch };
}

/** The published events of a reservation (history-only rows, written by imports, are not events anyone receives). */
async function eventTypesOf(reservationId: string): Promise<string[]> {
  const rows = await db()
    .select({ type: events.type })
    .from(events)
    .where(and(eq(events.subjectId, reservationId), eq(events.published, true)))
    .orderBy(events.createdAt, events.id);
  return rows.map((r) => r.type);
}

describe('paths that make covers or a table live again keep pacing, or flag the reservation', () => {
  it('no_show → arrived into a block refilled meanwhile (the issue: 5 + 5, no-show, a new 5, back): needsAttention, the event, no table', async () => {
    const v = await setup(sixes('A', 'B'));
    await v.book('19:00', 5);
    const late = await v.book('19:00', 5);
    expect((await v.patch(late.id, { status: 'no_show' })).status).toBe(200);
    const newcomer = await v.book('19:00', 5);
    expect(newcomer.table.tableId).toBe(late.table.tableId);

    const back = await v.patch(late.id, { status: 'arrived' });
    expect(back.status, back.text).toBe(200);
    expect(back.body.reservation).toMatchObject({ status: 'arrived', needsAttention: true, tableAssigned: false, table: null });
    expect(await eventTypesOf(late.id)).toEqual([
      'reservation_created',
      'reservation_no_show',
      'guest_arrived',
      'reservation_needs_attention',
    ]);
    await expectInvariantsHold([v.venueId]);
  });

  it('no_show → seated with its table still free but its covers rebooked: keeps the table and is flagged', async () => {
    const v = await setup(sixes('A', 'B', 'C'));
    await v.book('19:00', 5);
    const late = await v.book('19:00', 5);
    await v.patch(late.id, { status: 'no_show' });
    await v.book('19:15', 5, { tableId: v.fixture.tableIds.C });

    const back = await v.patch(late.id, { status: 'seated' });
    expect(back.status, back.text).toBe(200);
    expect(back.body.reservation).toMatchObject({
      status: 'seated',
      needsAttention: true,
      tableAssigned: true,
      table: { tableId: v.fixture.tableIds.B },
    });
    expect(await eventTypesOf(late.id)).toContain('reservation_needs_attention');
    await expectInvariantsHold([v.venueId]);
  });

  it('no_show → arrived within pacing takes its table back, unflagged and without the event; a key without floor:write may not do it', async () => {
    const v = await setup(sixes('A', 'B'));
    await v.book('19:00', 5);
    const late = await v.book('19:00', 4);
    await v.patch(late.id, { status: 'no_show' });
    const plain = client(server.url, await createKey(v.organisationId, { scopes: ['reservations:read', 'reservations:write'] }));
    const refused = await plain.patch(`/reservations/${late.id}`, { status: 'arrived' });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'floor:write' } });

    const back = await v.patch(late.id, { status: 'arrived' });
    expect(back.body.reservation).toMatchObject({ needsAttention: false, tableAssigned: true, table: { tableId: late.table.tableId } });
    expect(await eventTypesOf(late.id)).not.toContain('reservation_needs_attention');
    await expectInvariantsHold([v.venueId]);
  });

  it('a forced booking over pacing is flagged; a table given to it keeps the flag until the block has room', async () => {
    const v = await setup([...sixes('A', 'B'), { name: 'T2', minSeats: 1, maxSeats: 2 }, { name: 'U2', minSeats: 1, maxSeats: 2 }]);
    const first = await v.book('19:00', 5);
    await v.book('19:00', 5);
    const refused = await v.api.post('/reservations', { venueId: v.venueId, serviceDate: tomorrow, time: '19:15', partySize: 2 });
    expect(refused.body.error.details.reason).toBe('pacing_full');
    const forced = await v.book('19:15', 2, { force: true });
    expect(forced).toMatchObject({ needsAttention: true, tableAssigned: false });
    expect(await eventTypesOf(forced.id)).toEqual(['reservation_created', 'reservation_needs_attention']);

    const tabled = await v.patch(forced.id, { tableId: v.fixture.tableIds.T2 });
    expect(tabled.status, tabled.text).toBe(200);
    expect(tabled.body.reservation).toMatchObject({ tableAssigned: true, needsAttention: true });
    await expectInvariantsHold([v.venueId]);

    // Once the block has room, a table clears the flag.
    await v.api.delete(`/reservations/${first.id}`);
    const cleared = await v.patch(forced.id, { tableId: v.fixture.tableIds.U2 });
    expect(cleared.body.reservation).toMatchObject({
      tableAssigned: true,
      needsAttention: false,
      table: { tableId: v.fixture.tableIds.U2 },
    });
    await expectInvariantsHold([v.venueId]);
  });

  it('PATCH of time, party size or table never takes a block over pacing: 409 pacing_full, nothing changes', async () => {
    const v = await setup(sixes('A', 'B', 'C', 'D', 'E'));
    const a = await v.book('19:00', 5);
    await v.book('19:10', 5);
    const later = await v.book('20:00', 2);
    for (const [id, body] of [
      [later.id, { time: '19:15' }],
      [a.id, { partySize: 6 }],
      [later.id, { time: '19:20', tableId: v.fixture.tableIds.E }],
    ] as const) {
      const res = await v.patch(id, body);
      expect(res.status, res.text).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'no_availability', details: { reason: 'pacing_full' } });
    }
    // A table change alone of a reservation within pacing stays unflagged.
    const moved = await v.patch(a.id, { tableId: v.fixture.tableIds.D });
    expect(moved.status, moved.text).toBe(200);
    expect(moved.body.reservation).toMatchObject({ needsAttention: false, table: { tableId: v.fixture.tableIds.D } });
    await expectInvariantsHold([v.venueId]);
  });

  it('a waiting-list conversion into a full block is 409 pacing_full and the entry keeps waiting', async () => {
    const v = await setup(sixes('A', 'B', 'C'));
    await v.book('19:00', 5);
    await v.book('19:00', 5);
    const entry = (
      await v.api.post('/waitlist', { venueId: v.venueId, serviceDate: tomorrow, partySize: 2, name: 'Ada', phone: '347 123 4567' })
    ).body.entry;
    const res = await v.api.post(`/waitlist/${entry.id}/convert`, { time: '19:15' });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error.details.reason).toBe('pacing_full');
    expect((await v.api.get(`/waitlist/${entry.id}`)).body.entry.status).toBe('waiting');
    const elsewhere = await v.api.post(`/waitlist/${entry.id}/convert`, { time: '19:30' });
    expect(elsewhere.status, elsewhere.text).toBe(200);
    await expectInvariantsHold([v.venueId]);
  });

  it('an import of a future row into a full block creates it flagged, without a table and without events (docs/operations.md "Reservation imports")', async () => {
    const v = await setup(sixes('A', 'B', 'C'));
    await v.book('19:00', 5);
    await v.book('19:00', 5);
    const submitted = await v.api.post('/imports/reservations', {
      rows: [{ venueId: v.venueId, serviceDate: tomorrow, time: '19:15', partySize: 2, externalRef: 'ext-1' }],
    });
    expect(submitted.status, submitted.text).toBe(202);
    expect(await waitForImport(v.api, submitted.body.import.id)).toMatchObject({ status: 'completed', createdRows: 1 });
    const [imported] = (await v.api.get(`/reservations?venueId=${v.venueId}&externalRef=ext-1`)).body.data;
    expect(imported).toMatchObject({ needsAttention: true, tableAssigned: false });
    expect(await eventTypesOf(imported.id)).toEqual([]);
    await expectInvariantsHold([v.venueId]);
  });

  it('6 rounds: no-shows coming back while new parties book their covers, concurrently; no unflagged block above maxCovers', async () => {
    for (let round = 0; round < 6; round++) {
      const v = await setup(sixes('A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J'));
      const parties = [];
      for (let i = 0; i < 5; i++) parties.push(await v.book('19:00', 2));
      await Promise.all(parties.map((p) => v.patch(p.id, { status: 'no_show' })));
      const results = await Promise.all([
        ...parties.map((p, i) => v.patch(p.id, { status: i % 2 ? 'arrived' : 'seated' })),
        ...Array.from({ length: 5 }, () =>
          v.api.post('/reservations', { venueId: v.venueId, serviceDate: tomorrow, time: '19:15', partySize: 2 }),
        ),
      ]);
      for (const r of results) expect([200, 201, 409], r.text).toContain(r.status);
      for (const r of results.slice(0, 5)) expect(r.status).toBe(200);
      await expectInvariantsHold([v.venueId]);
    }
  });
});
