import { spawn, type ChildProcess } from 'node:child_process';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { events, guests, imports, reservations, reservationTables } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { handleImportJob } from '../../src/roles/import-handler.js';
import { importJob, importWorkerOptions, type ImportJob } from '../../src/jobs/import-job.js';
import { startJobWorker, type RunningWorker } from '../../src/queues/start-worker.js';
import { importChunkSize } from '../../src/services/imports/import-contract.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { eventually } from '../support/eventually.js';
import { waitForImport } from '../support/imports.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { compiledEntry, killProcess } from '../support/entry-process.js';

// Its own queues: no worker of another test file may take these imports, so that killing the
// child worker really interrupts one.
useOwnQueuePrefix('rimp');

const server = useTestServer();
afterAll(async () => closeQueues());

const phoneOf = (n: number) => `+39 347 ${String(n).padStart(7, '0')}`;
const timeOf = (i: number) => `${String(18 + (i % 4)).padStart(2, '0')}:${['00', '15', '30', '45'][i % 4]}`;

/**
 * 1,000 rows, by i % 10: 0 invalid fields (five kinds), 1 a venue of another organisation, 2 an
 * invalid phone, 3 past with a phone, 4 past without one, 5–8 future (6 with its own duration,
 * 8 with an externalRef), 9 the externalRef of row i − 1 again. Rows 5, 15, 25, 35 and 45 carry
 * the externalRef of a reservation that exists already.
 */
function mixedRows(venueId: string, strangerVenueId: string) {
  const invalid = [{ partySize: 0 }, { time: '25:00' }, { serviceDate: undefined }, { colour: 'red' }, { durationMinutes: 3 }];
  return Array.from({ length: 1000 }, (_, i) => {
    const kind = i % 10;
    const future = {
      venueId,
      serviceDate: localDate(1 + (i % 20)),
      time: timeOf(Math.floor(i / 20)),
      partySize: 1 + (i % 6),
      channel: 'thefork',
    };
    const past = { venueId, serviceDate: localDate(-1 - (i % 20)), time: timeOf(i), partySize: 2, notes: `past ${i}` };
    switch (kind) {
      case 0:
        return { ...future, ...invalid[(i / 10) % 5] };
      case 1:
        return { ...future, venueId: strangerVenueId };
      case 2:
        return { ...future, phone: '12345' };
      case 3:
        return { ...past, phone: phoneOf(i), guestName: `Guest ${i}` };
      case 4:
        return { ...past, guestName: 'Walk-by' };
      case 5:
        return i < 50 ? { ...future, externalRef: `pre-${i}` } : future;
      case 6:
        return { ...future, durationMinutes: 60, phone: phoneOf(i) };
      case 8:
        return { ...future, externalRef: `ext-${i}` };
      case 9:
        return { ...future, externalRef: `ext-${i - 1}` };
      default:
        return future;
    }
  });
}

async function importedReservations(venueId: string) {
  return db()
    .select()
    .from(reservations)
    .where(and(eq(reservations.venueId, venueId), eq(reservations.source, 'import')));
}

/**
 * The imports workers' lock in this file: short, so that a killed worker's job is handed over within
 * seconds. Every worker of the file's queue takes it, the one in this process too: BullMQ runs a
 * queue's stalled-job check at most once per interval of whichever worker ran it last, so a worker
 * left at the default 30 s held the killed worker's job for up to 30 s more.
 */
const lockMs = 2000;

describe('POST /imports/reservations with worker-imports running', () => {
  let worker: RunningWorker<ImportJob>;
  beforeAll(() => {
    worker = startJobWorker(importJob, handleImportJob, { concurrency: 2, ...importWorkerOptions({ IMPORT_WORKER_LOCK_MS: lockMs }) });
  });
  afterAll(async () => worker.close());

  it('imports 1,000 mixed rows with exact counts and rejections, without events', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const stranger = await createTenant();
    const api = client(server.url, t.key);
    const pre = [];
    for (const i of [5, 15, 25, 35, 45]) {
      const res = await api.post('/reservations', {
        venueId: t.venueId,
        serviceDate: localDate(30 + i),
        time: '19:00',
        partySize: 2,
        externalRef: `pre-${i}`,
      });
      expect(res.status).toBe(201);
      pre.push(res.body.reservation);
    }

    const res = await api.post('/imports/reservations', { rows: mixedRows(t.venueId, stranger.venueId) });
    expect(res.status).toBe(202);
    expect(res.body.import).toMatchObject({ kind: 'reservations', status: 'processing', totalRows: 1000, createdRows: 0 });
    const done = await waitForImport(api, res.body.import.id, 60_000);
    expect(done).toMatchObject({ status: 'completed', totalRows: 1000, createdRows: 595, updatedRows: 5, rejectedRows: 400 });

    const byCode = (code: string) => done.rejections.filter((r: any) => r.code === code);
    expect(byCode('invalid_field')).toHaveLength(100);
    expect(byCode('venue_not_found')).toHaveLength(100);
    expect(byCode('invalid_phone')).toHaveLength(100);
    expect(byCode('duplicate_row')).toHaveLength(100);
    expect(done.rejections.slice(0, 4)).toEqual([
      { row: 0, code: 'invalid_field', message: expect.any(String), fields: ['partySize'] },
      { row: 1, code: 'venue_not_found', message: expect.any(String), fields: ['venueId'] },
      { row: 2, code: 'invalid_phone', message: expect.any(String), fields: ['phone'] },
      { row: 9, code: 'duplicate_row', message: expect.any(String), fields: ['externalRef'] },
    ]);
    expect(done.rejections.filter((r: any) => r.row < 50 && r.code === 'invalid_field').map((r: any) => r.fields)).toEqual([
      ['partySize'],
      ['time'],
      ['serviceDate'],
      ['colour'],
      ['durationMinutes'],
    ]);

    const rows = await importedReservations(t.venueId);
    expect(rows).toHaveLength(595);
    const past = rows.filter((r) => r.startsAt.getTime() < Date.now());
    expect(past).toHaveLength(200);
    for (const r of past) expect(r).toMatchObject({ status: 'completed', tableAssigned: false, needsAttention: false, tableId: null });
    const future = rows.filter((r) => r.startsAt.getTime() > Date.now());
    expect(future).toHaveLength(395);
    for (const r of future) {
      expect(r.status).toBe('created');
      expect(r.needsAttention).toBe(!r.tableAssigned);
      expect(r.sourceDetail).toBe('thefork');
    }
    // The engine seats some (3 tables a day) and leaves the rest to arrange, never two on one table at once.
    expect(future.filter((r) => r.tableAssigned).length).toBeGreaterThan(20);
    expect(future.filter((r) => r.needsAttention).length).toBeGreaterThan(20);
    const own = future.find((r) => r.endsAt.getTime() - r.startsAt.getTime() === 60 * 60_000);
    expect(own).toBeDefined();
    // Without a channel the key's name; a name without a phone stays with the notes.
    const walkBy = past.find((r) => r.notes === 'Walk-by — past 4');
    expect(walkBy).toMatchObject({ sourceDetail: 'test key', guestId: null, source: 'import' });
    expect((await api.get(`/reservations/${walkBy!.id}`)).body.reservation).toMatchObject({
      status: 'completed',
      table: null,
      tableAssigned: false,
    });

    // The pre-existing reservations were updated in place: their time, party and channel come from the rows.
    for (const [n, r] of pre.entries()) {
      const [row] = await db().select().from(reservations).where(eq(reservations.id, r.id));
      const i = [5, 15, 25, 35, 45][n];
      expect(row).toMatchObject({
        serviceDate: localDate(1 + (i % 20)),
        time: timeOf(Math.floor(i / 20)),
        partySize: 1 + (i % 6),
        source: 'api',
        sourceDetail: 'thefork',
        externalRef: `pre-${i}`,
      });
    }

    // A guest per past row with a phone (and per future row with one), their visit counted; no events at all.
    const guest = (
      await db()
        .select()
        .from(guests)
        .where(and(eq(guests.venueId, t.venueId), eq(guests.phone, '+393470000003')))
    )[0];
    expect(guest).toMatchObject({ firstName: 'Guest', lastName: '3', visitCount: 1 });
    // The venue's only events are those of the five reservations booked through the API.
    const venueEvents = await db().select().from(events).where(eq(events.venueId, t.venueId));
    const published = venueEvents.filter((e) => e.published);
    expect(published.map((e) => e.type)).toEqual(Array(5).fill('reservation_created'));
    expect(published.map((e) => e.subjectId).sort()).toEqual(pre.map((r) => r.id).sort());
    // Besides them, one history-only row per written reservation (reservation history), never dispatched.
    const historyOnly = venueEvents.filter((e) => !e.published);
    expect(historyOnly).toHaveLength(600);
    expect(historyOnly.every((e) => e.dispatchedAt !== null && e.actor?.kind === 'import')).toBe(true);
    expect(
      historyOnly
        .filter((e) => e.type === 'reservation_modified')
        .map((e) => e.subjectId)
        .sort(),
    ).toEqual(pre.map((r) => r.id).sort());

    const overlaps = await db().execute(sql`
      select count(*)::int as n from ${reservationTables} a join ${reservationTables} b
        on a.table_id = b.table_id and a.reservation_id < b.reservation_id and a.live and b.live and a.during && b.during
      where a.venue_id = ${t.venueId}`);
    expect((overlaps as unknown as { n: number }[])[0].n).toBe(0);
  }, 90_000);

  it('returns the same import for the same Idempotency-Key and body (200), refuses another body (422)', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const body = { rows: [{ venueId: t.venueId, serviceDate: localDate(2), time: '19:00', partySize: 2, externalRef: 'same-1' }] };
    const first = await api.post('/imports/reservations', body, { 'idempotency-key': 'res-import-1' });
    expect(first.status).toBe(202);
    await waitForImport(api, first.body.import.id);
    const replay = await api.post('/imports/reservations', body, { 'idempotency-key': 'res-import-1' });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.import).toMatchObject({ id: first.body.import.id, kind: 'reservations', status: 'completed', createdRows: 1 });
    const other = await api.post(
      '/imports/reservations',
      { rows: [{ ...body.rows[0], partySize: 3 }] },
      { 'idempotency-key': 'res-import-1' },
    );
    expect(other.status).toBe(422);
    expect(other.body.error.code).toBe('idempotency_key_reused');
    // The same key for a guest import is another operation.
    expect(
      (await api.post('/imports/guests', { rows: [{ venueId: t.venueId, phone: phoneOf(1) }] }, { 'idempotency-key': 'res-import-1' }))
        .status,
    ).toBe(422);
    expect(await db().select().from(imports).where(eq(imports.organisationId, t.organisationId))).toHaveLength(1);
    expect(await importedReservations(t.venueId)).toHaveLength(1);

    // Importing the same rows again (another key) updates instead of duplicating.
    const again = await api.post('/imports/reservations', body);
    expect(await waitForImport(api, again.body.import.id)).toMatchObject({ createdRows: 0, updatedRows: 1 });
    expect(await importedReservations(t.venueId)).toHaveLength(1);
  });

  it('validates the request and needs imports:write; a limited key cannot import into other venues', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    for (const body of [{ rows: [] }, { rows: Array.from({ length: 1001 }, () => ({})) }, { rows: [1] }, {}]) {
      const res = await api.post('/imports/reservations', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const noScope = client(server.url, await createKey(t.organisationId, { scopes: ['reservations:write'] }));
    const denied = await noScope.post('/imports/reservations', { rows: [{}] });
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.requiredScope).toBe('imports:write');

    const other = (await api.post('/venues', { name: 'Other', timezone: 'Europe/Rome', countryCode: 'IT' })).body.venue.id;
    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [t.venueId] }));
    const res = await limited.post('/imports/reservations', {
      rows: [
        { venueId: t.venueId, serviceDate: localDate(3), time: '20:00', partySize: 4 },
        { venueId: other, serviceDate: localDate(3), time: '20:00', partySize: 4 },
      ],
    });
    expect(await waitForImport(limited, res.body.import.id)).toMatchObject({
      createdRows: 1,
      rejectedRows: 1,
      rejections: [{ row: 1, code: 'venue_not_found', fields: ['venueId'] }],
    });
  });
});

describe('worker-imports killed in the middle of an import', () => {
  const children: ChildProcess[] = [];

  /** worker-imports (compiled) as its own process. */
  function spawnImportsWorker(): ChildProcess {
    const env = { ...process.env, LOG_LEVEL: 'silent', IMPORT_WORKER_LOCK_MS: String(lockMs) };
    const child = spawn(process.execPath, [compiledEntry('workers/imports.ts')], { env, stdio: 'ignore' });
    children.push(child);
    return child;
  }

  afterAll(async () => {
    await Promise.all(children.map(killProcess));
  });

  it('resumes after the last committed chunk: exact counts, no duplicate reservation', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const stranger = await createTenant();
    const api = client(server.url, t.key);
    for (const i of [5, 15, 25, 35, 45]) {
      await api.post('/reservations', {
        venueId: t.venueId,
        serviceDate: localDate(30 + i),
        time: '19:00',
        partySize: 2,
        externalRef: `pre-${i}`,
      });
    }

    const first = spawnImportsWorker();
    const res = await api.post('/imports/reservations', { rows: mixedRows(t.venueId, stranger.venueId) });
    const id = res.body.import.id;
    // SIGKILL as soon as the first chunk has committed.
    // The child needs seconds to start on a loaded machine; polled often, so that the kill
    // lands between the first chunks.
    await eventually(
      async () => {
        const [{ processedRows }] = await db().select({ processedRows: imports.processedRows }).from(imports).where(eq(imports.id, id));
        return processedRows >= importChunkSize;
      },
      45_000,
      'the first chunk committed',
      5,
    );
    await killProcess(first);
    const [interrupted] = await db().select().from(imports).where(eq(imports.id, id));
    expect(interrupted.status).toBe('processing');
    expect(interrupted.processedRows).toBeGreaterThanOrEqual(importChunkSize);
    expect(interrupted.processedRows).toBeLessThan(1000);

    // The dead worker's BullMQ lock expires and the new worker takes the job over.
    spawnImportsWorker();
    await eventually(
      async () => (await db().select({ status: imports.status }).from(imports).where(eq(imports.id, id)))[0].status !== 'processing',
      60_000,
      'the import taken over and concluded',
      250,
    );
    const done = (await api.get(`/imports/${id}`)).body.import;
    expect(done).toMatchObject({ status: 'completed', createdRows: 595, updatedRows: 5, rejectedRows: 400 });
    expect(new Set(done.rejections.map((r: any) => r.row)).size).toBe(400);
    const rows = await importedReservations(t.venueId);
    expect(rows).toHaveLength(595);
    const refs = rows.flatMap((r) => (r.externalRef ? [r.externalRef] : []));
    expect(new Set(refs).size).toBe(refs.length);
  }, 120_000);
});
