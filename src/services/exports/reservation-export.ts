import type { ServerResponse } from 'node:http';
import { chooseTolerantOfLag } from '../../db/read-replica.js';
import { hasScope, type AuthContext } from '../../core/auth-context.js';
import { csvLine } from '../../lib/csv.js';
import { guestName } from '../guests/guest-json.js';
import { getVisibleVenue } from '../venues/venue-service.js';

export type ExportFormat = 'csv' | 'ndjson';

/** Rows fetched per cursor step: memory stays flat whatever the range. */
const cursorRows = 500;

interface ExportRow {
  id: string;
  venue_id: string;
  service_date: string;
  time: string;
  starts_at: string;
  ends_at: string;
  party_size: number;
  status: string;
  source: string;
  source_detail: string | null;
  external_ref: string | null;
  table_assigned: boolean;
  needs_attention: boolean;
  tables: string[] | null;
  notes: string | null;
  guest_id: string | null;
  created_at: string;
  updated_at: string;
  first_name?: string | null;
  last_name?: string | null;
  phone?: string | null;
  email?: string | null;
  allergies?: string | null;
  allergens?: string[] | null;
  visit_count?: number | null;
  no_show_count?: number | null;
}

const reservationColumns = [
  'id',
  'venueId',
  'serviceDate',
  'time',
  'startsAt',
  'endsAt',
  'partySize',
  'status',
  'source',
  'sourceDetail',
  'externalRef',
  'tableAssigned',
  'needsAttention',
  'tables',
  'notes',
  'guestId',
  'createdAt',
  'updatedAt',
] as const;
const guestColumns = [
  'guestName',
  'guestPhone',
  'guestEmail',
  'guestAllergies',
  'guestAllergens',
  'guestVisitCount',
  'guestNoShowCount',
] as const;

/** One exported reservation: the fields of the columns above, in their order, as CSV cells and as ndjson keys. */
function exportRecord(r: ExportRow, withGuests: boolean) {
  const record = {
    id: r.id,
    venueId: r.venue_id,
    serviceDate: r.service_date,
    time: r.time,
    startsAt: r.starts_at,
    endsAt: r.ends_at,
    partySize: r.party_size,
    status: r.status,
    source: r.source,
    sourceDetail: r.source_detail,
    externalRef: r.external_ref,
    tableAssigned: r.table_assigned,
    needsAttention: r.needs_attention,
    tables: r.tables ?? [],
    notes: r.notes,
    guestId: r.guest_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
  if (!withGuests) return record;
  const hasGuest = r.guest_id !== null && r.phone != null;
  return {
    ...record,
    guestName: hasGuest ? guestName({ firstName: r.first_name ?? null, lastName: r.last_name ?? null }) : null,
    guestPhone: hasGuest ? r.phone! : null,
    guestEmail: hasGuest ? (r.email ?? null) : null,
    guestAllergies: hasGuest ? (r.allergies ?? null) : null,
    guestAllergens: hasGuest ? (r.allergens ?? []) : [],
    guestVisitCount: hasGuest ? (r.visit_count ?? 0) : null,
    guestNoShowCount: hasGuest ? (r.no_show_count ?? 0) : null,
  };
}

type ExportRecord = ReturnType<typeof exportRecord>;

/** A CSV cell of a record value: lists are joined (table names with `+`, allergens with `|`). */
function cell(key: string, value: ExportRecord[keyof ExportRecord]): string | number | boolean | null {
  if (Array.isArray(value)) return value.join(key === 'tables' ? '+' : '|');
  return value as string | number | boolean | null;
}

/** Writes a chunk; when the socket's buffer is full, waits until it drains (or the client has gone). */
async function write(res: ServerResponse, chunk: string): Promise<void> {
  if (res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * GET /exports/reservations: the venue's reservations of the serviceDates `from` … `to`, ordered by
 * startsAt, streamed from a database cursor in steps of 500 rows with the socket's backpressure, so
 * that memory does not grow with the range. Guest columns only for a key with guests:read. Stops
 * reading when the client goes away.
 */
export async function streamReservationExport(
  auth: AuthContext,
  q: { venueId: string; from: string; to: string; format: ExportFormat },
  res: ServerResponse,
): Promise<void> {
  const venue = await getVisibleVenue(auth, q.venueId);
  const withGuests = hasScope(auth, 'guests:read');
  // An export tolerates the replica's lag (docs/operations.md "Running on several machines").
  const sql = (await chooseTolerantOfLag()).$client;
  // Instants are written by PostgreSQL in the API's form (the pool hands timestamps out as raw text).
  const iso = (column: string) => sql`to_char(${sql(column)} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  const query = sql<ExportRow[]>`
    select r.id, r.venue_id, to_char(r.service_date, 'YYYY-MM-DD') as service_date, r.time, ${iso('r.starts_at')} as starts_at,
      ${iso('r.ends_at')} as ends_at, r.party_size, r.status, r.source, r.source_detail, r.external_ref, r.table_assigned, r.needs_attention,
      r.notes, r.guest_id, ${iso('r.created_at')} as created_at, ${iso('r.updated_at')} as updated_at,
      (select array_agg(ft.name order by ft.name) from reservation_tables rt join floor_tables ft on ft.id = rt.table_id
        where rt.reservation_id = r.id) as tables
      ${withGuests ? sql`, g.first_name, g.last_name, g.phone, g.email, g.allergies, g.allergens, g.visit_count, g.no_show_count` : sql``}
    from reservations r
    ${withGuests ? sql`left join guests g on g.id = r.guest_id` : sql``}
    where r.venue_id = ${venue.id} and r.service_date between ${q.from}::date and ${q.to}::date
    order by r.starts_at, r.id`;

  const filename = `reservations-${venue.id}-${q.from}-${q.to}.${q.format}`;
  res.statusCode = 200;
  res.setHeader('Content-Type', q.format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${filename}"`);
  res.setHeader('Cache-Control', 'no-store');
  if (q.format === 'csv') await write(res, csvLine(withGuests ? [...reservationColumns, ...guestColumns] : reservationColumns));
  for await (const rows of query.cursor(cursorRows)) {
    if (res.destroyed) break;
    let chunk = '';
    for (const row of rows) {
      const record = exportRecord(row, withGuests);
      chunk += q.format === 'csv' ? csvLine(Object.entries(record).map(([k, v]) => cell(k, v))) : `${JSON.stringify(record)}\n`;
    }
    await write(res, chunk);
  }
  res.end();
}
