import { and, eq, inArray, isNotNull, isNull, lt, sql, type SQL } from 'drizzle-orm';
import { db, transaction, type DbOrTx, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests, venues, type GuestConsents } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { isSameGuestName } from '../../lib/person-name.js';
import { normalisePhone, parsePhone, type Phone } from '../../lib/phone.js';
import { violatedUniqueIndex } from '../../lib/unique-violation.js';
import type { Emit, NewEvent } from '../outbox/outbox.js';
import { actorOf, transactionWithEvents } from '../outbox/outbox.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import type { VenueRow } from '../venues/venue-json.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import { guestJson, type GuestRow } from './guest-json.js';
import type { GuestContactInput, GuestFieldsPatch } from './guest-input.js';
import { loadServiceTagNames, resolveServiceTags } from './service-tag-service.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';

export const guestTrashRetentionDays = 30;

export type GuestChangeReason = 'guest_created' | 'profile_changed' | 'service_tags_changed';
type GuestVenue = Pick<VenueRow, 'id' | 'organisationId' | 'countryCode'>;

/** The 400 of an invalid phone number (docs/api.md "Requests": `details.field` is `phone`). */
export function invalidPhoneError(): ApiError {
  return ApiError.invalid(['phone'], 'phone is not a valid phone number.', { field: 'phone' });
}

/** A phone in any written form, read once with the venue's country (parsePhone), or the phone 400. */
export function parsePhoneOrThrow(raw: string, countryCode: string): Phone {
  const phone = parsePhone(raw, countryCode);
  if (!phone) throw invalidPhoneError();
  return phone;
}

/** The columns derived from the phone: the E.164 form and the national digits that search matches. */
function phoneColumns(phone: Phone): { phone: string; phoneNational: string } {
  return { phone: phone.e164, phoneNational: phone.nationalDigits };
}

export function guestChangedEvent(guest: GuestRow, reason: GuestChangeReason, livemode: boolean): NewEvent {
  return {
    organisationId: guest.organisationId,
    venueId: guest.venueId,
    livemode,
    type: 'guest_profile_changed',
    subjectType: 'guest',
    subjectId: guest.id,
    data: { guest: guestJson(guest), reason },
  };
}

/** The 409 of a unique index on live guests (phone or externalRef of the venue), or the error unchanged. */
function toGuestConflict(err: unknown): unknown {
  const index = violatedUniqueIndex(err);
  if (index === 'guests_venue_phone_live_idx')
    return new ApiError('conflict', 'Another guest of this venue has this phone.', { fields: ['phone'] });
  if (index === 'guests_venue_external_ref_live_idx') {
    return new ApiError('conflict', 'Another guest of this venue has this externalRef.', { fields: ['externalRef'] });
  }
  return err;
}

async function withGuestConflicts<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw toGuestConflict(err);
  }
}

export async function findLiveGuestByPhone(conn: DbOrTx, venueId: string, phone: string): Promise<GuestRow | undefined> {
  const [row] = await conn
    .select()
    .from(guests)
    .where(and(eq(guests.venueId, venueId), eq(guests.phone, phone), isNull(guests.deletedAt)));
  return row;
}

/** A live guest of the venue, or null (unknown, another venue, or in the trash). */
export async function getGuestForVenue(tx: DbOrTx, venueId: string, guestId: string): Promise<GuestRow | null> {
  const [row] = await tx
    .select()
    .from(guests)
    .where(and(eq(guests.id, guestId), eq(guests.venueId, venueId), isNull(guests.deletedAt)));
  return row ?? null;
}

/** The contact columns of a new guest: what the input leaves out is stored empty. */
function contactColumns(input: Omit<GuestContactInput, 'phone'>) {
  return {
    firstName: input.firstName ?? null,
    lastName: input.lastName ?? null,
    email: input.email ?? null,
    allergies: input.allergies ?? null,
    allergens: input.allergens ?? [],
    notes: input.notes ?? null,
  };
}

/**
 * The live guest of the venue with this phone, or a new one created from the input (emitting
 * guest_created, in the caller's mode: `livemode`). An existing guest is returned as it is: a booking
 * does not rewrite a profile. Throws the phone 400 when the number is invalid. Safe under
 * concurrency: two requests creating the same phone end with one guest.
 */
export async function findOrCreateGuestByPhone(
  tx: Tx,
  emit: Emit,
  venue: GuestVenue,
  input: GuestContactInput,
  livemode: boolean,
): Promise<GuestRow> {
  return findOrCreateGuest(tx, emit, { venue, phone: parsePhoneOrThrow(input.phone, venue.countryCode), contact: input, livemode });
}

/** A guest to find or create by phone: of `venue`, its phone already read (parsed once by the caller), its contact fields, and the mode of its guest_created event. */
export interface GuestByPhone {
  venue: GuestVenue;
  phone: Phone;
  contact: Omit<GuestContactInput, 'phone'>;
  livemode: boolean;
}

/** findOrCreateGuestByPhone with the phone already read. */
export async function findOrCreateGuest(tx: Tx, emit: Emit, wanted: GuestByPhone): Promise<GuestRow> {
  return (await findLiveGuestByPhone(tx, wanted.venue.id, wanted.phone.e164)) ?? createGuestWithPhone(tx, emit, wanted);
}

/** A new guest of the venue with this phone, or the one a concurrent request created meanwhile. */
async function createGuestWithPhone(tx: Tx, emit: Emit, { venue, phone, contact, livemode }: GuestByPhone): Promise<GuestRow> {
  const [created] = await tx
    .insert(guests)
    .values({
      organisationId: venue.organisationId,
      venueId: venue.id,
      ...phoneColumns(phone),
      ...contactColumns(contact),
    })
    .onConflictDoNothing()
    .returning();
  if (!created) {
    // A concurrent request created the guest between our read and our insert.
    const raced = await findLiveGuestByPhone(tx, venue.id, phone.e164);
    if (raced) return raced;
    throw new ApiError('conflict', 'The guest was changed concurrently; repeat the request.');
  }
  emit(guestChangedEvent(created, 'guest_created', livemode));
  return created;
}

/**
 * The guest of a widget (publishable key) booking (docs/security.md "Widget bookings"). The key is
 * public, so a phone number alone proves nothing: the venue's guest with that phone (normalised)
 * is the booking's only when the name given is theirs too (isSameGuestName). Otherwise null: the
 * booking is made without a guest and the guest's profile and history stay untouched. A phone the
 * venue does not know creates its guest as any booking does.
 */
export async function findOrCreateWidgetGuest(tx: Tx, emit: Emit, wanted: GuestByPhone): Promise<GuestRow | null> {
  const existing = await findLiveGuestByPhone(tx, wanted.venue.id, wanted.phone.e164);
  if (existing) return isSameGuestName(existing, wanted.contact) ? existing : null;
  return createGuestWithPhone(tx, emit, wanted);
}

function mergeConsents(current: GuestConsents, patch: GuestFieldsPatch['consents']): GuestConsents {
  return { marketingEmail: patch?.marketingEmail ?? current.marketingEmail, marketingSms: patch?.marketingSms ?? current.marketingSms };
}

export type GuestCreateInput = GuestFieldsPatch & { phone: string };

/** Column values of a new guest of the venue with the phone `phone` (already read): service tags resolved. */
export async function newGuestValues(
  conn: DbOrTx,
  venue: GuestVenue,
  input: GuestFieldsPatch,
  phone: Phone,
): Promise<typeof guests.$inferInsert> {
  return {
    organisationId: venue.organisationId,
    venueId: venue.id,
    ...phoneColumns(phone),
    ...contactColumns(input),
    consents: mergeConsents({ marketingEmail: false, marketingSms: false }, input.consents),
    campaignTags: input.campaignTags ?? [],
    serviceTags: await resolveServiceTags(conn, venue.id, input.serviceTags ?? []),
    externalRef: input.externalRef ?? null,
  };
}

export interface GuestChange {
  set: Partial<typeof guests.$inferInsert>;
  profileChanged: boolean;
  serviceTagsChanged: boolean;
}

/** What a patch really changes on a guest; fields given with their current value change nothing. */
export async function diffGuest(conn: DbOrTx, guest: GuestRow, countryCode: string, patch: GuestFieldsPatch): Promise<GuestChange> {
  const next: Partial<typeof guests.$inferInsert> = {};
  const simple = ['firstName', 'lastName', 'email', 'allergies', 'allergens', 'notes', 'campaignTags', 'externalRef'] as const;
  for (const field of simple) if (patch[field] !== undefined) Object.assign(next, { [field]: patch[field] });
  if (patch.phone !== undefined) Object.assign(next, phoneColumns(parsePhoneOrThrow(patch.phone, countryCode)));
  if (patch.consents !== undefined) next.consents = mergeConsents(guest.consents, patch.consents);
  if (patch.serviceTags !== undefined) next.serviceTags = await resolveServiceTags(conn, guest.venueId, patch.serviceTags);

  const set: Partial<typeof guests.$inferInsert> = {};
  for (const [field, value] of Object.entries(next)) {
    if (JSON.stringify(value) !== JSON.stringify(guest[field as keyof GuestRow])) Object.assign(set, { [field]: value });
  }
  const serviceTagsChanged = 'serviceTags' in set;
  const profileChanged = Object.keys(set).some((f) => f !== 'serviceTags');
  return { set, profileChanged, serviceTagsChanged };
}

/** A guest of the key's organisation and visible venues, also while in the trash; 404 otherwise. */
export async function getVisibleGuest(auth: AuthContext, id: string, conn: DbOrTx = db(), lock = false): Promise<GuestRow> {
  const query = conn
    .select()
    .from(guests)
    .where(and(eq(guests.id, id), eq(guests.organisationId, auth.organisationId), visibleVenueIds(auth, guests.venueId)));
  const [row] = lock ? await query.for('update') : await query;
  if (!row) throw ApiError.notFound('Guest');
  return row;
}

export async function createGuest(
  auth: AuthContext,
  input: GuestCreateInput & { venueId: string },
  log: Logger = logger,
): Promise<GuestRow> {
  return withGuestConflicts(() =>
    transactionWithEvents(
      actorOf(auth),
      async (tx, emit) => {
        const venue = await getVisibleVenue(auth, input.venueId, tx);
        const [row] = await tx
          .insert(guests)
          .values(await newGuestValues(tx, venue, input, parsePhoneOrThrow(input.phone, venue.countryCode)))
          .returning();
        emit(guestChangedEvent(row, 'guest_created', auth.livemode));
        return row;
      },
      log,
      auth.signal,
    ),
  );
}

/**
 * Changes a live guest. Events: profile_changed when any field other than serviceTags changed,
 * service_tags_changed when serviceTags changed; a patch changing both emits both, in that order.
 * A patch that changes nothing writes nothing.
 */
export async function updateGuest(auth: AuthContext, id: string, patch: GuestFieldsPatch, log: Logger = logger): Promise<GuestRow> {
  return withGuestConflicts(() =>
    transactionWithEvents(
      actorOf(auth),
      async (tx, emit) => {
        // The venue's tags are locked before the guest row, in the order of a tag rename (the tag, then
        // the guests carrying it): the other order could deadlock with it.
        if (patch.serviceTags?.length) await loadServiceTagNames(tx, (await getVisibleGuest(auth, id, tx)).venueId);
        const guest = await getVisibleGuest(auth, id, tx, true);
        if (guest.deletedAt) throw ApiError.notFound('Guest');
        const [venue] = await tx.select({ countryCode: venues.countryCode }).from(venues).where(eq(venues.id, guest.venueId));
        const change = await diffGuest(tx, guest, venue.countryCode, patch);
        if (!change.profileChanged && !change.serviceTagsChanged) return guest;
        const [row] = await tx
          .update(guests)
          .set({ ...change.set, updatedAt: nextUpdatedAt(guests.updatedAt) })
          .where(eq(guests.id, id))
          .returning();
        if (change.profileChanged) emit(guestChangedEvent(row, 'profile_changed', auth.livemode));
        if (change.serviceTagsChanged) emit(guestChangedEvent(row, 'service_tags_changed', auth.livemode));
        return row;
      },
      log,
      auth.signal,
    ),
  );
}

/** Moves a guest to the trash (a guest already there stays as it is). */
export async function trashGuest(auth: AuthContext, id: string): Promise<void> {
  const guest = await getVisibleGuest(auth, id);
  if (guest.deletedAt) return;
  await db()
    .update(guests)
    .set({ deletedAt: sql`clock_timestamp()`, updatedAt: nextUpdatedAt(guests.updatedAt) })
    .where(and(eq(guests.id, id), isNull(guests.deletedAt)));
}

/** Takes a guest out of the trash within the retention; 409 when its phone or externalRef has meanwhile been taken. */
export async function restoreGuest(auth: AuthContext, id: string): Promise<GuestRow> {
  return withGuestConflicts(() =>
    transaction(async (tx) => {
      const guest = await getVisibleGuest(auth, id, tx, true);
      if (!guest.deletedAt) return guest;
      if (guest.deletedAt.getTime() < Date.now() - guestTrashRetentionDays * 86_400_000) throw ApiError.notFound('Guest');
      const [row] = await tx
        .update(guests)
        .set({ deletedAt: null, updatedAt: nextUpdatedAt(guests.updatedAt) })
        .where(eq(guests.id, id))
        .returning();
      return row;
    }, auth.signal),
  );
}

/** Deletes the guests in the trash for longer than the retention, in batches (daily purge). */
export async function purgeTrashedGuests(): Promise<number> {
  const batch = 1000;
  let total = 0;
  for (;;) {
    const expired = db()
      .select({ id: guests.id })
      .from(guests)
      .where(
        and(isNotNull(guests.deletedAt), lt(guests.deletedAt, sql`clock_timestamp() - make_interval(days => ${guestTrashRetentionDays})`)),
      )
      .limit(batch);
    const deleted = await db().delete(guests).where(inArray(guests.id, expired)).returning({ id: guests.id });
    total += deleted.length;
    if (deleted.length < batch) return total;
  }
}

export interface GuestListQuery extends ListQuery {
  venueId?: string;
  /** Words already parsed by parseGuestSearch. */
  search?: string[];
  phone?: string;
  email?: string;
  externalRef?: string;
}

/**
 * The condition of the `phone` filter. With a venue, the phone is read with its country; without,
 * with the country of each visible venue, each reading matching only the venues of that country.
 */
async function phoneFilter(auth: AuthContext, raw: string, venue: VenueRow | undefined): Promise<SQL> {
  const candidates = venue
    ? [venue]
    : await db()
        .select()
        .from(venues)
        .where(and(eq(venues.organisationId, auth.organisationId), visibleVenueIds(auth, venues.id)));
  const byPhone = new Map<string, string[]>();
  for (const v of candidates) {
    const phone = normalisePhone(raw, v.countryCode);
    if (phone) byPhone.set(phone, [...(byPhone.get(phone) ?? []), v.id]);
  }
  if (!candidates.length) return sql`false`;
  if (!byPhone.size) throw invalidPhoneError();
  const alternatives = [...byPhone].map(([phone, ids]) => and(eq(guests.phone, phone), inArray(guests.venueId, ids))!);
  return alternatives.length === 1 ? alternatives[0] : sql`(${sql.join(alternatives, sql` or `)})`;
}

/**
 * Each word as a substring of the search text. Within a venue, a word of 3 or more digits (a piece
 * of a phone number, src/lib/guest-search.ts) takes another index path: guests_venue_digits_idx
 * (migration 0032) holds each guest's digit trigrams keyed by its venue, so the venue's own postings
 * bound the work, where the trigram index checks trigrams every number shares (`330`, `000`)
 * against candidates across the organisation. The trigrams are necessary, not sufficient: the
 * substring test stays, written with strpos (the same test for a word of digits, which has no LIKE
 * wildcard and which lower and unaccent leave unchanged) so that the planner does not also reach for
 * the trigram index, whose conditions a generic plan cannot tell apart from these.
 */
function searchFilter(words: string[], venueId: string | undefined): SQL[] {
  return words.flatMap((w) =>
    venueId && /^[0-9]{3,}$/.test(w)
      ? [
          sql`guest_digit_trigrams(${guests.venueId}, ${guests.searchText}) @> guest_digit_trigrams(${venueId}::uuid, ${w}::text)`,
          sql`strpos(${guests.searchText}, ${w}::text) > 0`,
        ]
      : [sql`${guests.searchText} like '%' || lower(immutable_unaccent(${w}::text)) || '%'`],
  );
}

/**
 * GET /guests. The trash is hidden, except with changedAfter (so that a sync client sees
 * deletions) when no search is given: search never shows trashed guests.
 */
export async function listGuests(auth: AuthContext, query: GuestListQuery) {
  const venue = query.venueId ? await getVisibleVenue(auth, query.venueId) : undefined;
  const conditions: (SQL | undefined)[] = [eq(guests.organisationId, auth.organisationId), visibleVenueIds(auth, guests.venueId)];
  if (venue) conditions.push(eq(guests.venueId, venue.id));
  if (query.phone !== undefined) conditions.push(await phoneFilter(auth, query.phone, venue));
  if (query.email !== undefined) conditions.push(sql`lower(${guests.email}) = lower(${query.email.trim()})`);
  if (query.externalRef !== undefined) conditions.push(eq(guests.externalRef, query.externalRef));
  if (query.search) conditions.push(...searchFilter(query.search, venue?.id));
  if (query.changedAfter === undefined || query.search) conditions.push(isNull(guests.deletedAt));
  return fetchPage<GuestRow>({
    query,
    idColumn: guests.id,
    naturalOrder: [{ column: guests.createdAt, kind: 'instant', read: (g) => g.createdAt }],
    updatedAt: { column: guests.updatedAt, kind: 'instant', read: (g) => g.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(guests)
        .where(and(...conditions, keyset))
        .orderBy(...orderBy)
        .limit(limit),
  });
}

/** GET /guests/lookup: the live guest of the venue with that phone, or the normalised phone. */
export async function lookupGuest(
  auth: AuthContext,
  venueId: string,
  rawPhone: string,
): Promise<{ found: true; guest: GuestRow } | { found: false; phone: string }> {
  const venue = await getVisibleVenue(auth, venueId);
  const { e164 } = parsePhoneOrThrow(rawPhone, venue.countryCode);
  const guest = await findLiveGuestByPhone(db(), venue.id, e164);
  return guest ? { found: true, guest } : { found: false, phone: e164 };
}
