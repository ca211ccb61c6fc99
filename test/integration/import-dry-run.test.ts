import { and, count, eq } from 'drizzle-orm';
import { afterAll, describe, expect, it } from 'vitest';

import { db } from '../../src/db/client.js';
import { guests, reservations } from '../../src/db/schema/index.js';
import { closeQueues } from '../../src/queues/queues.js';
import { runImport } from '../../src/services/imports/process-import-job.js';
import { client, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues: no worker of another test file takes the real imports, which this file runs itself.
useOwnQueuePrefix('dry');

const server = useTestServer();
afterAll(async () => closeQueues());

const phoneOf = (n: number) => `+39 347 ${String(n).padStart(7, '0')}`;

async function countRows(table: typeof reservations | typeof guests, venueId: string): Promise<number> {
  const [{ n }] = await db().select({ n: count() }).from(table).where(eq(table.venueId, venueId));
  return n;
}

/** Runs the rows dry, checks that nothing was written or kept, then for real; returns both answers. */
async function dryThenReal(api: Client, kind: 'reservations' | 'guests', venueId: string, rows: unknown[]) {
  const before = { reservations: await countRows(reservations, venueId), guests: await countRows(guests, venueId) };
  const listed = (await api.get('/imports?limit=100')).body.data.length;

  const dry = await api.post(`/imports/${kind}?dryRun=true`, { rows });
  expect(dry.status).toBe(200);
  expect(dry.body.import).toMatchObject({ kind, status: 'dry_run', totalRows: rows.length });
  expect({ reservations: await countRows(reservations, venueId), guests: await countRows(guests, venueId) }).toEqual(before);
  expect((await api.get('/imports?limit=100')).body.data).toHaveLength(listed);
  expect((await api.get(`/imports/${dry.body.import.id}`)).status).toBe(404);

  const submitted = await api.post(`/imports/${kind}`, { rows });
  expect(submitted.status).toBe(202);
  await runImport(submitted.body.import.id);
  const real = (await api.get(`/imports/${submitted.body.import.id}`)).body.import;
  expect(real.status).toBe('completed');
  return { dry: dry.body.import, real };
}

const plan = (i: any) => ({
  createdRows: i.createdRows,
  updatedRows: i.updatedRows,
  rejectedRows: i.rejectedRows,
  rejections: i.rejections,
});

describe('dry-run imports (docs/operations.md "Reservation imports")', () => {
  it('plans reservation rows exactly as the real import then does them, across chunks', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    for (const [n, ref] of ['pre-1', 'pre-2', 'pre-3'].entries()) {
      expect(
        (
          await api.post('/reservations', {
            venueId: t.venueId,
            serviceDate: localDate(10),
            time: `2${n}:00`,
            partySize: 2,
            externalRef: ref,
          })
        ).status,
      ).toBe(201);
    }
    // 250 rows (three chunks of the real run), by i % 10: an invalid field, an invalid phone, a past
    // row, a future row with an externalRef, the previous row's externalRef again, a party no table
    // fits (needsAttention), and future rows crowding the same time so that tables run out.
    const rows = Array.from({ length: 250 }, (_, i) => {
      const future = { venueId: t.venueId, serviceDate: localDate(1 + (i % 5)), time: '19:30', partySize: 2 };
      switch (i % 10) {
        case 0:
          return { ...future, partySize: 0 };
        case 1:
          return { ...future, phone: '12345' };
        case 2:
          return { ...future, serviceDate: localDate(-1 - (i % 5)), phone: phoneOf(i), guestName: `Guest ${i}` };
        case 3:
          return { ...future, externalRef: `ext-${i}` };
        case 4:
          return { ...future, externalRef: `ext-${i - 1}` };
        case 5:
          return { ...future, partySize: 12 };
        default:
          return { ...future, phone: phoneOf(i % 7) };
      }
    });
    // Rows of later chunks naming existing reservations and a row of the first chunk.
    rows[101] = { venueId: t.venueId, serviceDate: localDate(3), time: '20:00', partySize: 3, externalRef: 'pre-1' };
    rows[202] = { venueId: t.venueId, serviceDate: localDate(-3), time: '20:00', partySize: 4, externalRef: 'pre-2' };
    rows[207] = { venueId: t.venueId, serviceDate: localDate(2), time: '20:00', partySize: 2, externalRef: 'ext-3' };

    const { dry, real } = await dryThenReal(api, 'reservations', t.venueId, rows);
    expect(plan(dry)).toEqual(plan(real));
    // 25 invalid fields + 24 invalid phones (row 101 replaced one) + 25 duplicates + row 207 (ext-3 again).
    expect(real).toMatchObject({ createdRows: 173, updatedRows: 2, rejectedRows: 75 });
    expect(real.rejections.filter((r: any) => r.code === 'duplicate_row').map((r: any) => r.row)).toContain(207);
    const [{ n: needsAttention }] = await db()
      .select({ n: count() })
      .from(reservations)
      .where(and(eq(reservations.venueId, t.venueId), eq(reservations.source, 'import'), eq(reservations.needsAttention, true)));
    expect(needsAttention).toBeGreaterThanOrEqual(25);
  }, 60_000);

  it('plans guest rows exactly as the real import then does them', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    expect((await api.post('/guests', { venueId: t.venueId, phone: phoneOf(900), externalRef: 'crm-1', firstName: 'Old' })).status).toBe(
      201,
    );
    expect((await api.post('/guests', { venueId: t.venueId, phone: phoneOf(901), firstName: 'Known' })).status).toBe(201);
    const rows = [
      ...Array.from({ length: 20 }, (_, i) => ({ venueId: t.venueId, phone: phoneOf(i), firstName: `G${i}` })),
      { venueId: t.venueId, phone: phoneOf(3), firstName: 'Same phone' },
      { venueId: t.venueId, phone: 'not a phone' },
      { venueId: t.venueId, phone: phoneOf(950), externalRef: 'crm-1', firstName: 'New name' },
      { venueId: t.venueId, phone: phoneOf(901), lastName: 'By phone' },
      { venueId: t.venueId, phone: phoneOf(951), externalRef: 'crm-1' },
      { venueId: t.venueId },
    ];
    const { dry, real } = await dryThenReal(api, 'guests', t.venueId, rows);
    expect(plan(dry)).toEqual(plan(real));
    expect(real).toMatchObject({ createdRows: 20, updatedRows: 2, rejectedRows: 4 });
    expect(real.rejections.map((r: any) => [r.row, r.code])).toEqual([
      [20, 'duplicate_row'],
      [21, 'invalid_phone'],
      [24, 'duplicate_row'],
      [25, 'invalid_field'],
    ]);
  });

  it('validates dryRun and keeps the scope and venue rules of real imports', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    const rows = [{ venueId: t.venueId, phone: phoneOf(1) }];
    const bad = await api.post('/imports/guests?dryRun=yes', { rows });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(['dryRun']);
    const stranger = await createTenant();
    const foreign = await client(server.url, stranger.key).post('/imports/guests?dryRun=true', { rows });
    expect(foreign.body.import).toMatchObject({
      status: 'dry_run',
      createdRows: 0,
      rejectedRows: 1,
      rejections: [{ row: 0, code: 'venue_not_found' }],
    });
  });
});
