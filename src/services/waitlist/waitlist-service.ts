import { and, eq, inArray, sql } from 'drizzle-orm';
import { db, type DbOrTx, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { venues, waitlistEntries } from '../../db/schema/index.js';
import { hasScope, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { instantToLocal } from '../../lib/local-time.js';
import { splitPersonName } from '../../lib/person-name.js';
import type { EventType } from '../../lib/event-catalogue.js';
import { actorOf, transactionWithEvents, type Emit } from '../outbox/outbox.js';
import { guestName, type GuestRow } from '../guests/guest-json.js';
import { findOrCreateGuestByPhone, getGuestForVenue } from '../guests/guest-service.js';
import { fetchPage, type ListQuery } from '../pagination.js';
import type { VenueRow } from '../venues/venue-json.js';
import { createReservationIn } from '../reservations/create-reservation.js';
import { retryBookingTransaction } from '../reservations/table-moves.js';
import type { ReservationParts } from '../reservations/reservation-json.js';
import { getVisibleVenue, visibleVenueIds } from '../venues/venue-service.js';
import { waitlistEntryJson, type WaitlistEntryRow } from './waitlist-json.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';

export type WaitlistStatus = WaitlistEntryRow['status'];

/** Entries still in the queue; converted, cancelled and expired are final. */
export const activeWaitlistStatuses = ['waiting', 'notified'] as const satisfies readonly WaitlistStatus[];

export function isActiveEntry(entry: WaitlistEntryRow): boolean {
  return (activeWaitlistStatuses as readonly string[]).includes(entry.status);
}

export function invalidEntryTransition(entry: WaitlistEntryRow, action: string): ApiError {
  return new ApiError('invalid_request', `A ${entry.status} entry cannot be ${action}.`, {
    reason: 'invalid_transition',
    fields: ['status'],
  });
}

export function showsGuestData(auth: AuthContext): boolean {
  return hasScope(auth, 'guests:read');
}

/** An event about an entry; its data carries the entry with its guest data, like reservation events. */
export function emitWaitlistEvent(
  emit: Emit,
  entry: WaitlistEntryRow,
  type: Extract<EventType, `waitlist_${string}` | 'compatible_table_freed'>,
  livemode: boolean,
): void {
  emit({
    organisationId: entry.organisationId,
    venueId: entry.venueId,
    livemode,
    type,
    subjectType: 'waitlist_entry',
    subjectId: entry.id,
    data: { waitlistEntry: waitlistEntryJson(entry) },
  });
}

export async function getVisibleEntry(auth: AuthContext, id: string, conn: DbOrTx = db(), lock = false): Promise<WaitlistEntryRow> {
  const query = conn
    .select()
    .from(waitlistEntries)
    .where(
      and(
        eq(waitlistEntries.id, id),
        eq(waitlistEntries.organisationId, auth.organisationId),
        visibleVenueIds(auth, waitlistEntries.venueId),
      ),
    );
  const [entry] = lock ? await query.for('update') : await query;
  if (!entry) throw ApiError.notFound('Waiting-list entry');
  return entry;
}

export interface EntryGuestInput {
  guestId?: string;
  name?: string | null;
  phone?: string;
}

/** The entry's guest: by id (of that venue), or found / created by phone like a reservation's guest. */
async function resolveEntryGuest(tx: Tx, emit: Emit, venue: VenueRow, input: EntryGuestInput, livemode: boolean): Promise<GuestRow | null> {
  if (input.guestId !== undefined) {
    const guest = await getGuestForVenue(tx, venue.id, input.guestId);
    if (!guest) throw ApiError.invalid(['guestId'], 'No guest of this venue has this id.');
    return guest;
  }
  if (input.phone !== undefined) {
    return findOrCreateGuestByPhone(tx, emit, venue, { phone: input.phone, ...splitPersonName(input.name) }, livemode);
  }
  return null;
}

export interface CreateEntryInput extends EntryGuestInput {
  venueId: string;
  serviceDate?: string;
  partySize: number;
  notes?: string | null;
  quotedWaitMinutes?: number | null;
}

/** Serialises the position numbering of one venue's serviceDate queue until the transaction ends. */
async function lockQueue(tx: Tx, venueId: string, serviceDate: string): Promise<void> {
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('waitlist'), hashtext(${venueId} || ${serviceDate}))`);
}

/** POST /waitlist: the party joins the end of the queue of its serviceDate (today by default). */
export async function createWaitlistEntry(auth: AuthContext, input: CreateEntryInput, log: Logger = logger): Promise<WaitlistEntryRow> {
  if (input.guestId !== undefined && input.phone !== undefined)
    throw ApiError.invalid(['guestId', 'phone'], 'Give guestId or phone, not both.');
  if (input.guestId === undefined && input.phone === undefined && !input.name) {
    throw ApiError.invalid(['name'], 'An entry needs a name, a phone or a guestId.');
  }
  return transactionWithEvents(
    actorOf(auth),
    async (tx, emit) => {
      const venue = await getVisibleVenue(auth, input.venueId, tx);
      const today = instantToLocal(venue.timezone, Date.now()).date;
      const serviceDate = input.serviceDate ?? today;
      if (serviceDate < today) throw ApiError.invalid(['serviceDate'], 'serviceDate is in the past for the venue.');
      const guest = await resolveEntryGuest(tx, emit, venue, input, auth.livemode);
      await lockQueue(tx, venue.id, serviceDate);
      const [{ next }] = await tx
        .select({ next: sql<number>`coalesce(max(${waitlistEntries.position}), 0) + 1` })
        .from(waitlistEntries)
        .where(and(eq(waitlistEntries.venueId, venue.id), eq(waitlistEntries.serviceDate, serviceDate)));
      const [entry] = await tx
        .insert(waitlistEntries)
        .values({
          organisationId: venue.organisationId,
          venueId: venue.id,
          serviceDate,
          partySize: input.partySize,
          guestId: guest?.id ?? null,
          name: input.name || (guest ? guestName(guest) : null),
          phone: guest?.phone ?? null,
          notes: input.notes ?? null,
          position: Number(next),
          quotedWaitMinutes: input.quotedWaitMinutes ?? null,
        })
        .returning();
      emitWaitlistEvent(emit, entry, 'waitlist_entry_created', auth.livemode);
      return entry;
    },
    log,
    auth.signal,
  );
}

export interface WaitlistListQuery extends ListQuery {
  venueId?: string;
  serviceDate?: string;
  status?: WaitlistStatus;
}

/** GET /waitlist: queue order (serviceDate, then position); with changedAfter, by updatedAt. */
export async function listWaitlistEntries(auth: AuthContext, query: WaitlistListQuery) {
  if (query.venueId) await getVisibleVenue(auth, query.venueId);
  return fetchPage<WaitlistEntryRow>({
    query,
    idColumn: waitlistEntries.id,
    naturalOrder: [
      { column: sql`${waitlistEntries.serviceDate}::text`, kind: 'text', read: (e) => e.serviceDate },
      { column: waitlistEntries.position, kind: 'number', read: (e) => e.position },
    ],
    updatedAt: { column: waitlistEntries.updatedAt, kind: 'instant', read: (e) => e.updatedAt },
    fetch: (keyset, orderBy, limit) =>
      db()
        .select()
        .from(waitlistEntries)
        .where(
          and(
            eq(waitlistEntries.organisationId, auth.organisationId),
            visibleVenueIds(auth, waitlistEntries.venueId),
            query.venueId ? eq(waitlistEntries.venueId, query.venueId) : undefined,
            query.serviceDate ? eq(waitlistEntries.serviceDate, query.serviceDate) : undefined,
            query.status ? eq(waitlistEntries.status, query.status) : undefined,
            keyset,
          ),
        )
        .orderBy(...orderBy)
        .limit(limit),
  });
}

export interface EntryPatch {
  partySize?: number;
  name?: string | null;
  phone?: string;
  notes?: string | null;
  quotedWaitMinutes?: number | null;
}

type EntryChange = { set: Partial<typeof waitlistEntries.$inferInsert>; event?: 'waitlist_entry_cancelled' } | null;

/** Applies a change to an entry (locked) in one transaction with its event, which carries the entry as changed. */
async function changeEntry(
  auth: AuthContext,
  id: string,
  log: Logger,
  change: (tx: Tx, emit: Emit, entry: WaitlistEntryRow) => Promise<EntryChange>,
): Promise<WaitlistEntryRow> {
  return transactionWithEvents(
    actorOf(auth),
    async (tx, emit) => {
      const entry = await getVisibleEntry(auth, id, tx, true);
      const result = await change(tx, emit, entry);
      if (!result) return entry;
      const [updated] = await tx
        .update(waitlistEntries)
        .set({ ...result.set, updatedAt: nextUpdatedAt(waitlistEntries.updatedAt) })
        .where(eq(waitlistEntries.id, id))
        .returning();
      if (result.event) emitWaitlistEvent(emit, updated, result.event, auth.livemode);
      return updated;
    },
    log,
    auth.signal,
  );
}

/** PATCH /waitlist/:id: party, contact, notes and quote of an entry still in the queue. A new phone finds or creates its guest. */
export function updateWaitlistEntry(auth: AuthContext, id: string, patch: EntryPatch, log: Logger = logger): Promise<WaitlistEntryRow> {
  return changeEntry(auth, id, log, async (tx, emit, entry) => {
    if (!isActiveEntry(entry)) throw invalidEntryTransition(entry, 'changed');
    const set: Partial<typeof waitlistEntries.$inferInsert> = {};
    if (patch.partySize !== undefined) set.partySize = patch.partySize;
    if (patch.notes !== undefined) set.notes = patch.notes;
    if (patch.quotedWaitMinutes !== undefined) set.quotedWaitMinutes = patch.quotedWaitMinutes;
    if (patch.name !== undefined) set.name = patch.name;
    if (patch.phone !== undefined) {
      const venue = await getVisibleVenue(auth, entry.venueId, tx);
      const guest = await resolveEntryGuest(tx, emit, venue, { phone: patch.phone, name: patch.name ?? entry.name }, auth.livemode);
      set.guestId = guest?.id ?? null;
      set.phone = guest?.phone ?? null;
    }
    return Object.keys(set).length ? { set } : null;
  });
}

/** POST /waitlist/:id/notify: the party was called back; each call-back records its time. */
export function notifyWaitlistEntry(auth: AuthContext, id: string, log: Logger = logger): Promise<WaitlistEntryRow> {
  return changeEntry(auth, id, log, async (_tx, _emit, entry) => {
    if (!isActiveEntry(entry)) throw invalidEntryTransition(entry, 'notified');
    return { set: { status: 'notified', notifiedAt: new Date() } };
  });
}

/** DELETE /waitlist/:id: the party leaves the queue (waitlist_entry_cancelled); cancelling twice changes nothing. */
export function cancelWaitlistEntry(auth: AuthContext, id: string, log: Logger = logger): Promise<WaitlistEntryRow> {
  return changeEntry(auth, id, log, async (_tx, _emit, entry) => {
    if (entry.status === 'cancelled') return null;
    if (!isActiveEntry(entry)) throw invalidEntryTransition(entry, 'cancelled');
    return { set: { status: 'cancelled' }, event: 'waitlist_entry_cancelled' };
  });
}

export interface ConvertInput {
  time?: string;
  tableId?: string;
}

/**
 * POST /waitlist/:id/convert: a reservation for the party through the engine, source `waitlist`,
 * at `time` on the entry's serviceDate, or — without a time — now, the party being at the venue
 * (outside the booking window, like a walk-in). 409 no_availability as for POST /reservations,
 * and then nothing changes. The entry becomes converted in the same transaction.
 */
export async function convertWaitlistEntry(
  auth: AuthContext,
  id: string,
  input: ConvertInput,
  log: Logger = logger,
): Promise<{ entry: WaitlistEntryRow; reservation: ReservationParts }> {
  return retryBookingTransaction(() =>
    transactionWithEvents(
      actorOf(auth),
      async (tx, emit) => {
        const entry = await getVisibleEntry(auth, id, tx, true);
        if (!isActiveEntry(entry)) throw invalidEntryTransition(entry, 'converted');
        if (input.time === undefined) {
          const venue = await getVisibleVenue(auth, entry.venueId, tx);
          if (entry.serviceDate !== instantToLocal(venue.timezone, Date.now()).date) {
            throw ApiError.invalid(['time'], 'An entry of another day than today needs a time.');
          }
        }
        const reservation = await createReservationIn(tx, emit, auth, {
          venueId: entry.venueId,
          serviceDate: entry.serviceDate,
          time: input.time,
          startNow: input.time === undefined,
          partySize: entry.partySize,
          notes: entry.notes,
          // By phone, the guest is found again even if the one linked was moved to the trash meanwhile.
          ...(entry.phone
            ? { guest: { phone: entry.phone, ...splitPersonName(entry.name) } }
            : entry.guestId
              ? { guestId: entry.guestId }
              : {}),
          source: 'waitlist',
          tableId: input.tableId,
        });
        const [converted] = await tx
          .update(waitlistEntries)
          .set({
            status: 'converted',
            reservationId: reservation.row.id,
            guestId: reservation.row.guestId,
            updatedAt: nextUpdatedAt(waitlistEntries.updatedAt),
          })
          .where(eq(waitlistEntries.id, entry.id))
          .returning();
        return { entry: converted, reservation };
      },
      log,
      auth.signal,
    ),
  );
}

/**
 * Daily (docs/operations.md "Timers"): entries still in the queue of a serviceDate that is over in the venue's
 * time zone become `expired`. One conditional UPDATE: running it twice, or in two processes, is harmless.
 */
export async function expireWaitlistEntries(): Promise<number> {
  const expired = await db()
    .update(waitlistEntries)
    .set({ status: 'expired', updatedAt: nextUpdatedAt(waitlistEntries.updatedAt) })
    .from(venues)
    .where(
      and(
        eq(venues.id, waitlistEntries.venueId),
        inArray(waitlistEntries.status, activeWaitlistStatuses),
        sql`${waitlistEntries.serviceDate} < (clock_timestamp() at time zone ${venues.timezone})::date`,
      ),
    )
    .returning({ id: waitlistEntries.id });
  return expired.length;
}
