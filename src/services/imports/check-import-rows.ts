import { and, eq, inArray } from 'drizzle-orm';
import type { z } from 'zod';
import { db } from '../../db/client.js';
import { venues } from '../../db/schema/index.js';
import { fieldsOf } from '../../core/validation.js';
import type { VenueRow } from '../venues/venue-json.js';
import type { ImportRow } from './import-json.js';
import type { RowOutcome } from './import-contract.js';

export type Rejected = { rejected: RowOutcome };

export function rejectRow(code: string, message: string, fields: string[]): Rejected {
  return { rejected: { outcome: 'rejected', code, message, fields } };
}

/**
 * The checks every kind of import starts with: the row's fields, then its venue, which must be of
 * the organisation and visible to the submitting key. The kind goes on from `{row, venue}`.
 */
export async function parseRowsWithVenues<Row extends { venueId: string }>(
  record: ImportRow,
  schema: z.ZodType<Row>,
): Promise<Array<Rejected | { row: Row; venue: VenueRow }>> {
  const parsed = record.rows.map((raw) => schema.safeParse(raw));
  const venueIds = [...new Set(parsed.flatMap((p) => (p.success ? [p.data.venueId] : [])))].filter(
    (id) => record.venueIds === null || record.venueIds.includes(id),
  );
  const found = venueIds.length
    ? await db()
        .select()
        .from(venues)
        .where(and(eq(venues.organisationId, record.organisationId), inArray(venues.id, venueIds)))
    : [];
  const venueById = new Map(found.map((v) => [v.id, v]));
  return parsed.map((p) => {
    if (!p.success) return rejectRow('invalid_field', 'The row has invalid or missing fields.', fieldsOf(p.error));
    const venue = venueById.get(p.data.venueId);
    if (!venue) return rejectRow('venue_not_found', 'The venue does not exist or is not visible to the key.', ['venueId']);
    return { row: p.data, venue };
  });
}
