import { and, eq, isNull } from 'drizzle-orm';
import { z } from 'zod';
import { savepoint, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { parsePhone, type Phone } from '../../lib/phone.js';
import { violatedUniqueIndex } from '../../lib/unique-violation.js';
import type { ImportRow } from '../imports/import-json.js';
import { parseRowsWithVenues, rejectRow, type Rejected } from '../imports/check-import-rows.js';
import type { PreparedImport, RowOutcome } from '../imports/import-contract.js';
import type { VenueRow } from '../venues/venue-json.js';
import { guestContactSchema, guestProfileFields } from './guest-input.js';
import type { GuestRow } from './guest-json.js';
import { diffGuest, findLiveGuestByPhone, newGuestValues } from './guest-service.js';

/** A row of POST /imports/guests (docs/guests.md): venueId and phone required. */
export const guestImportRowSchema = guestContactSchema
  .extend({
    venueId: z.uuid(),
    externalRef: guestProfileFields.externalRef.optional(),
    serviceTags: guestProfileFields.serviceTags.optional(),
    consents: guestProfileFields.consents.optional(),
  })
  .strict();

type GuestImportRow = z.output<typeof guestImportRowSchema>;

type Checked = Rejected | { row: GuestImportRow; venue: VenueRow; phone: Phone };

/**
 * Checks every row before the first write: validity, venue (of the organisation and visible to the
 * submitting key), phone, and duplicates (the same externalRef or phone in the same venue as an
 * earlier row: the first one wins). Deterministic, so that a resumed run judges rows alike.
 */
async function checkRows(record: ImportRow): Promise<Checked[]> {
  const seen = new Set<string>();
  return (await parseRowsWithVenues(record, guestImportRowSchema)).map((checked): Checked => {
    if ('rejected' in checked) return checked;
    const { row, venue } = checked;
    const phone = parsePhone(row.phone, venue.countryCode);
    if (!phone) return rejectRow('invalid_phone', 'phone is not a valid phone number.', ['phone']);
    const refKey = row.externalRef ? `${venue.id} ref ${row.externalRef}` : null;
    const phoneKey = `${venue.id} phone ${phone.e164}`;
    if (refKey && seen.has(refKey))
      return rejectRow('duplicate_row', 'An earlier row of this import has the same externalRef.', ['externalRef']);
    if (seen.has(phoneKey)) return rejectRow('duplicate_row', 'An earlier row of this import has the same phone.', ['phone']);
    if (refKey) seen.add(refKey);
    seen.add(phoneKey);
    return { row, venue, phone };
  });
}

async function findByExternalRef(tx: Tx, venueId: string, externalRef: string): Promise<GuestRow | undefined> {
  const [row] = await tx
    .select()
    .from(guests)
    .where(and(eq(guests.venueId, venueId), eq(guests.externalRef, externalRef), isNull(guests.deletedAt)));
  return row;
}

/** Upserts one checked row: the live guest with its externalRef, else with its phone, else a new guest. No events. */
async function upsertGuest(tx: Tx, { row, venue, phone }: { row: GuestImportRow; venue: VenueRow; phone: Phone }): Promise<RowOutcome> {
  const { venueId: _venueId, ...fields } = row;
  const input = { ...fields, phone: phone.e164 };
  const existing =
    (row.externalRef ? await findByExternalRef(tx, venue.id, row.externalRef) : undefined) ??
    (await findLiveGuestByPhone(tx, venue.id, phone.e164));
  if (!existing) {
    await tx.insert(guests).values(await newGuestValues(tx, venue, fields, phone));
    return { outcome: 'created' };
  }
  const change = await diffGuest(tx, existing, venue.countryCode, input);
  if (Object.keys(change.set).length) {
    await tx
      .update(guests)
      .set({ ...change.set, updatedAt: nextUpdatedAt(guests.updatedAt) })
      .where(eq(guests.id, existing.id));
  }
  return { outcome: 'updated' };
}

export async function prepareGuestImport(record: ImportRow): Promise<PreparedImport> {
  const checked = await checkRows(record);
  return {
    processRow: async (tx, index) => {
      const check = checked[index];
      if ('rejected' in check) return check.rejected;
      try {
        // A savepoint per row: a row that breaks a constraint is rejected without undoing its chunk.
        return await savepoint(tx, (sp) => upsertGuest(sp, check));
      } catch (err) {
        if (err instanceof ApiError && err.code === 'invalid_request') {
          return { outcome: 'rejected', code: 'invalid_field', message: err.message, fields: err.details.fields ?? [] };
        }
        const index = violatedUniqueIndex(err);
        if (index === 'guests_venue_phone_live_idx')
          return { outcome: 'rejected', code: 'invalid_field', message: 'Another guest of the venue has this phone.', fields: ['phone'] };
        if (index === 'guests_venue_external_ref_live_idx') {
          return {
            outcome: 'rejected',
            code: 'invalid_field',
            message: 'Another guest of the venue has this externalRef.',
            fields: ['externalRef'],
          };
        }
        throw err;
      }
    },
  };
}
