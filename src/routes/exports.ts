import { z } from 'zod';
import { defineRoute } from '../http/define-route.js';
import { streamReservationExport } from '../services/exports/reservation-export.js';
import { checkReportRange, venueRangeFields } from '../services/reports/report-range.js';

export const exportRoutes = [
  defineRoute({
    method: 'get',
    path: '/exports/reservations',
    tag: 'Exports',
    summary: "Export a venue's reservations as CSV or ndjson",
    description:
      'The reservations of the serviceDates `from` … `to` (at most 366 days), ordered by startsAt, streamed (constant memory). `format`: ' +
      '`csv` (default; RFC 4180, header line, CRLF; `tables` joined with `+`, allergens with `|`) or `ndjson` (one JSON object per line, ' +
      'same keys). Columns: id, venueId, serviceDate, time, startsAt, endsAt, partySize, status, source, sourceDetail, externalRef, ' +
      'tableAssigned, needsAttention, tables, notes, guestId, createdAt, updatedAt; with guests:read also guestName, guestPhone, guestEmail, ' +
      'guestAllergies, guestAllergens, guestVisitCount, guestNoShowCount.',
    scope: 'reservations:read',
    query: z.object({ ...venueRangeFields, format: z.enum(['csv', 'ndjson']).default('csv') }).superRefine(checkReportRange),
    raw: true,
    operationId: 'exportReservations',
    responses: {
      200: {
        description: 'The reservations, streamed',
        content: {
          'text/csv': { schema: { type: 'string' }, example: 'id,venueId,serviceDate,time,...\r\n' },
          'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line, with the CSV columns as keys.' } },
        },
      },
    },
    handler: async ({ auth, query, res }) => streamReservationExport(auth, query, res),
  }),
];
