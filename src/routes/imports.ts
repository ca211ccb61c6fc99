import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { hashCanonical } from '../lib/canonical-json.js';
import { importJson, importSchema, type ImportKind } from '../services/imports/import-json.js';
import { dryRunImport, getVisibleImport, listImports, submitImport } from '../services/imports/import-service.js';
import { listQuerySchema } from '../services/pagination.js';

/** Rows are objects; their fields are checked one by one by the worker, a bad row becomes a rejection. */
const importBody = z.object({ rows: z.array(z.record(z.string(), z.unknown())).min(1).max(1000) });
const importQuery = z.object({ dryRun: z.enum(['true', 'false']).optional() });

/**
 * POST /imports/<kind>: 202 `{import}` processing; with an Idempotency-Key already used with the
 * same body, 200 `{import}` in its current state (docs/api.md "Keys, limits" and "Idempotency"); with ?dryRun=true, 200 `{import}`
 * planned, status `dry_run`, nothing written (docs/operations.md "Reservation imports"). Exported so that every import kind is
 * submitted alike.
 */
export function defineImportRoute(kind: ImportKind, summary: string, description: string) {
  return defineRoute({
    method: 'post',
    path: `/imports/${kind}`,
    tag: 'Imports',
    summary,
    description:
      `${description} With ?dryRun=true the rows are checked and planned by the same processing, inside a transaction that is rolled back: ` +
      '200 {import} with status `dry_run` and the counts and rejections the import would produce; nothing is written or kept, an Idempotency-Key is ignored.',
    scope: 'imports:write',
    query: importQuery,
    body: importBody,
    bodyLimit: '5mb',
    idempotency: 'manual',
    operationId: kind === 'guests' ? 'importGuests' : 'importReservations',
    responses: { 202: keyed('import', importSchema), 200: keyed('import', importSchema) },
    handler: async ({ auth, body, query, req, log }) => {
      if (query.dryRun === 'true') {
        return { body: { import: await dryRunImport(auth, { kind, rows: body.rows, requestHash: hashCanonical(req.body ?? {}) }) } };
      }
      const key = req.headers['idempotency-key'];
      const { record, replayed } = await submitImport(
        auth,
        {
          kind,
          rows: body.rows,
          requestHash: hashCanonical(req.body ?? {}),
          idempotencyKey: key === undefined ? undefined : String(key),
        },
        log,
      );
      return {
        status: replayed ? 200 : 202,
        body: { import: importJson(record) },
        headers: replayed ? { 'Idempotent-Replayed': 'true' } : undefined,
      };
    },
  });
}

export const importRoutes = [
  defineImportRoute(
    'guests',
    'Import guests',
    '1 to 1000 rows {venueId, phone, firstName, lastName, email, allergies, allergens, notes, externalRef, serviceTags, consents}. ' +
      'Each row updates the live guest of its venue with the same externalRef, else the same phone, else creates one; no events. ' +
      'Rejection codes: invalid_field, venue_not_found, invalid_phone, duplicate_row; `row` is the 0-based index in `rows`.',
  ),
  defineImportRoute(
    'reservations',
    'Import reservations',
    '1 to 1000 rows {venueId, serviceDate, time, partySize (1..500), phone?, guestName?, notes?, externalRef? (1..200), channel? (→ sourceDetail), ' +
      'durationMinutes? (5..720, replaces the turn-time rule)}. Source `import`; no events, no automations. A row starting before the import was submitted ' +
      'is created `completed`, without a table; a later one goes through the engine and, when it finds no table, is still created with ' +
      '`needsAttention: true`, `tableAssigned: false`. A row whose externalRef exists in its venue updates that reservation (updatedRows). ' +
      'Rejection codes: invalid_field, venue_not_found, invalid_phone, duplicate_row; `row` is the 0-based index in `rows`.',
  ),
  defineRoute({
    method: 'get',
    path: '/imports',
    operationId: 'listImports',
    responses: { 200: pageOf(importSchema) },
    tag: 'Imports',
    summary: 'List imports',
    scope: 'imports:write',
    query: listQuerySchema,
    handler: async ({ auth, query, services }) => {
      const page = await listImports(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(importJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/imports/:id',
    operationId: 'getImport',
    responses: { 200: keyed('import', importSchema) },
    tag: 'Imports',
    summary: 'Read an import and its progress',
    scope: 'imports:write',
    params: z.object({ id: z.uuid() }),
    handler: async ({ auth, params }) => ({ body: { import: importJson(await getVisibleImport(auth, params.id)) } }),
  }),
];
