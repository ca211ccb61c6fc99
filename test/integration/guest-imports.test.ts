import { and, eq, inArray, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, guests, imports } from '../../src/db/schema/index.js';
import { handleImportJob } from '../../src/roles/import-handler.js';
import { importJob, type ImportJob } from '../../src/jobs/import-job.js';
import { startJobWorker, type RunningWorker } from '../../src/queues/start-worker.js';
import { prepareGuestImport } from '../../src/services/guests/guest-import.js';
import { enqueueImport, requeueStalledImports } from '../../src/services/imports/import-service.js';
import { processNextChunk } from '../../src/services/imports/process-import-job.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { waitForImport } from '../support/imports.js';

const server = useTestServer();
let worker: RunningWorker<ImportJob>;
beforeAll(async () => {
  worker = startJobWorker(importJob, handleImportJob, { concurrency: 2 });
});
afterAll(async () => {
  await worker.close();
});

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
}

const phoneOf = (n: number) => `+39 347 ${String(n).padStart(7, '0')}`;

describe('POST /imports/guests', () => {
  it('creates, updates and rejects rows in the worker, with counts and rejections, and emits no event', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await c.post('/service-tags', { venueId: t.venueId, name: 'VIP' });
    const byPhone = (await c.post('/guests', { venueId: t.venueId, phone: '06 1234 5678', firstName: 'Old' })).body.guest;
    const byRef = (await c.post('/guests', { venueId: t.venueId, phone: phoneOf(900), externalRef: 'crm-9' })).body.guest;
    const stranger = await createTenant();

    const rows = [
      {
        venueId: t.venueId,
        phone: phoneOf(1),
        firstName: 'Ana',
        allergens: ['milk'],
        serviceTags: ['vip'],
        consents: { marketingSms: true },
        externalRef: 'crm-1',
      },
      { venueId: t.venueId, phone: phoneOf(2), lastName: 'Bruno' },
      { venueId: t.venueId, phone: '+39 06 1234 5678', firstName: 'New', notes: 'updated by phone' },
      { venueId: t.venueId, phone: phoneOf(901), externalRef: 'crm-9', lastName: 'By ref' },
      { venueId: t.venueId, phone: phoneOf(3), email: 'not-an-email' },
      { venueId: stranger.venueId, phone: phoneOf(4) },
      { venueId: t.venueId, phone: '12345' },
      { venueId: t.venueId, phone: phoneOf(5), externalRef: 'crm-1' },
      { venueId: t.venueId, phone: phoneOf(6), serviceTags: ['Unknown'] },
      { venueId: t.venueId, phone: phoneOf(7), allergens: ['chocolate'], colour: 'red' },
    ];
    const res = await c.post('/imports/guests', { rows });
    expect(res.status).toBe(202);
    expect(res.body.import).toMatchObject({
      id: expect.any(String),
      kind: 'guests',
      status: 'processing',
      totalRows: 10,
      completedAt: null,
    });

    const done = await waitForImport(c, res.body.import.id);
    expect(done).toMatchObject({
      status: 'completed',
      totalRows: 10,
      createdRows: 2,
      updatedRows: 2,
      rejectedRows: 6,
      completedAt: expect.any(String),
    });
    expect(done.rejections).toEqual([
      { row: 4, code: 'invalid_field', message: expect.any(String), fields: ['email'] },
      { row: 5, code: 'venue_not_found', message: expect.any(String), fields: ['venueId'] },
      { row: 6, code: 'invalid_phone', message: expect.any(String), fields: ['phone'] },
      { row: 7, code: 'duplicate_row', message: expect.any(String), fields: ['externalRef'] },
      { row: 8, code: 'invalid_field', message: expect.any(String), fields: ['serviceTags'] },
      { row: 9, code: 'invalid_field', message: expect.any(String), fields: expect.arrayContaining(['allergens.0', 'colour']) },
    ]);

    const ana = (await c.get('/guests?externalRef=crm-1')).body.data[0];
    expect(ana).toMatchObject({
      firstName: 'Ana',
      phone: '+393470000001',
      allergens: ['milk'],
      serviceTags: ['VIP'],
      consents: { marketingEmail: false, marketingSms: true },
    });
    expect((await c.get(`/guests/${byPhone.id}`)).body.guest).toMatchObject({ firstName: 'New', notes: 'updated by phone' });
    expect((await c.get(`/guests/${byRef.id}`)).body.guest).toMatchObject({ lastName: 'By ref', phone: '+393470000901' });
    expect((await client(server.url, stranger.key).get('/guests')).body.data).toEqual([]);

    const imported = await db().select({ id: guests.id }).from(guests).where(eq(guests.venueId, t.venueId));
    const importEvents = await db()
      .select()
      .from(events)
      .where(
        and(
          eq(events.subjectType, 'guest'),
          inArray(
            events.subjectId,
            imported.map((g) => g.id),
          ),
        ),
      );
    // Only the two guests created through POST /guests have an event.
    expect(importEvents.map((e) => (e.data as { reason: string }).reason)).toEqual(['guest_created', 'guest_created']);

    const list = await c.get('/imports');
    expect(list.body.data.map((i: any) => i.id)).toEqual([res.body.import.id]);
  });

  it('replays the same Idempotency-Key and body with the same import (200), refuses another body (422)', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const body = { rows: [{ venueId: t.venueId, phone: phoneOf(11) }] };
    const first = await c.post('/imports/guests', body, { 'idempotency-key': 'import-1' });
    expect(first.status).toBe(202);
    await waitForImport(c, first.body.import.id);
    const replay = await c.post('/imports/guests', body, { 'idempotency-key': 'import-1' });
    expect(replay.status).toBe(200);
    expect(replay.body.import).toMatchObject({ id: first.body.import.id, status: 'completed', createdRows: 1 });
    expectError(
      await c.post('/imports/guests', { rows: [{ venueId: t.venueId, phone: phoneOf(12) }] }, { 'idempotency-key': 'import-1' }),
      422,
      'idempotency_key_reused',
    );
    // One key, one operation: a key used by an import cannot create a guest, and the other way round.
    expectError(
      await c.post('/guests', { venueId: t.venueId, phone: phoneOf(13) }, { 'idempotency-key': 'import-1' }),
      422,
      'idempotency_key_reused',
    );
    expect((await c.post('/guests', { venueId: t.venueId, phone: phoneOf(14) }, { 'idempotency-key': 'guest-1' })).status).toBe(201);
    expectError(await c.post('/imports/guests', body, { 'idempotency-key': 'guest-1' }), 422, 'idempotency_key_reused');
    expect(await db().select().from(imports).where(eq(imports.organisationId, t.organisationId))).toHaveLength(1);
  });

  it('resumes an interrupted import after its last committed chunk, without duplicates', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const rows = Array.from({ length: 250 }, (_, i) => ({ venueId: t.venueId, phone: phoneOf(100 + i), externalRef: `r-${i}` }));
    // The record as POST /imports/guests writes it, but not enqueued yet: one chunk is done, then the run "dies".
    const [record] = await db()
      .insert(imports)
      .values({ organisationId: t.organisationId, apiKeyId: t.keyId, kind: 'guests', requestHash: 'x', rows, totalRows: rows.length })
      .returning();
    expect(await processNextChunk(record.id, await prepareGuestImport(record))).toBe(true);
    expect((await c.get(`/imports/${record.id}`)).body.import).toMatchObject({ status: 'processing', createdRows: 100 });

    await enqueueImport(record);
    const done = await waitForImport(c, record.id);
    expect(done).toMatchObject({ status: 'completed', createdRows: 250, updatedRows: 0, rejectedRows: 0 });
    const stored = await db().select({ id: guests.id }).from(guests).where(eq(guests.venueId, t.venueId));
    expect(stored).toHaveLength(250);
  });

  it('picks up an import whose job Redis never received', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const rows = [{ venueId: t.venueId, phone: phoneOf(77) }];
    const [record] = await db()
      .insert(imports)
      .values({
        organisationId: t.organisationId,
        apiKeyId: t.keyId,
        kind: 'guests',
        requestHash: 'x',
        rows,
        totalRows: 1,
        updatedAt: sql`clock_timestamp() - interval '2 minutes'`,
      })
      .returning();
    expect(await requeueStalledImports()).toBeGreaterThanOrEqual(1);
    expect(await waitForImport(c, record.id)).toMatchObject({ status: 'completed', createdRows: 1 });
  });

  it('validates the request: 1 to 1000 rows, each an object', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    for (const body of [{ rows: [] }, { rows: Array.from({ length: 1001 }, () => ({})) }, { rows: ['x'] }, {}, { rows: [{}], extra: 1 }]) {
      const res = await c.post('/imports/guests', body);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
    }
  });

  it('needs imports:write, keeps imports to their organisation, and rejects rows of venues a limited key cannot see', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const other = (await c.post('/venues', { name: 'Other', timezone: 'Europe/Rome', countryCode: 'IT' })).body.venue.id;
    const noScope = client(server.url, await createKey(t.organisationId, { scopes: ['guests:write', 'guests:read'] }));
    const denied = await noScope.post('/imports/guests', { rows: [{ venueId: t.venueId, phone: phoneOf(1) }] });
    expectError(denied, 403, 'insufficient_scope');
    expect(denied.body.error.details.requiredScope).toBe('imports:write');

    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [t.venueId] }));
    const res = await limited.post('/imports/guests', {
      rows: [
        { venueId: t.venueId, phone: phoneOf(1) },
        { venueId: other, phone: phoneOf(2) },
      ],
    });
    const done = await waitForImport(limited, res.body.import.id);
    expect(done).toMatchObject({ createdRows: 1, rejectedRows: 1, rejections: [{ row: 1, code: 'venue_not_found', fields: ['venueId'] }] });
    // The organisation-wide key sees the limited key's import; another organisation does not.
    expect((await c.get(`/imports/${res.body.import.id}`)).status).toBe(200);
    const stranger = client(server.url, (await createTenant()).key);
    expectError(await stranger.get(`/imports/${res.body.import.id}`), 404, 'not_found');
    expect((await stranger.get('/imports')).body.data).toEqual([]);
  });
});
