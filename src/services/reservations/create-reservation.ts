import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests, reservations } from '../../db/schema/index.js';
import { hasScope, isPublishable, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Seating } from '../../lib/availability/seatings.js';
import type { VenueConfig } from '../../lib/availability/types.js';
import { VenueDay, type Evaluation, type Timing } from '../../lib/availability/venue-day.js';
import { addDays, instantToLocal } from '../../lib/local-time.js';
import { formatMinutes, resolveServiceTime, MINUTES_PER_DAY } from '../../lib/shift-schedule.js';
import {
  hasPacing,
  loadBookings,
  loadDemandCurve,
  loadVenueConfig,
  loadVenueDayForBooking,
  lockPacingDay,
  type LoadedVenue,
} from '../availability/venue-day-loader.js';
import { actorOf, transactionWithEvents, type Emit } from '../outbox/outbox.js';
import { consumeHold, heldSeatingId, type HoldRow } from '../holds/hold-service.js';
import type { GuestContactInput } from '../guests/guest-input.js';
import type { GuestRow } from '../guests/guest-json.js';
import {
  findOrCreateGuestByPhone,
  findOrCreateWidgetGuest,
  getGuestForVenue,
  guestChangedEvent,
  normalisePhoneOrThrow,
} from '../guests/guest-service.js';
import { resolveServiceTags } from '../guests/service-tag-service.js';
import { emitReservationEvents } from './reservation-events.js';
import type { ReservationParts, ReservationRow } from './reservation-json.js';
import { externalRefConflict, insertReservationRow } from './reservation-rows.js';
import { namedSeating, noAvailability, occupyFirstFree, occupySeating, seatedTablesOf, seatingColumns } from './table-assignment.js';
import { applyTableMoves, evaluateInTurn, retryStaleMoves, StaleMovesError } from './table-moves.js';
import type { TableMove } from '../../lib/availability/table-optimiser.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { newId } from '../../lib/uuid-v7.js';

export type CreateSource = 'api' | 'phone' | 'voice_agent' | 'floor' | 'walk_in' | 'waitlist';

export interface CreateReservationInput {
  venueId: string;
  /** Required except for walk-ins, which start now. */
  serviceDate?: string;
  time?: string;
  partySize: number;
  notes?: string | null;
  externalRef?: string | null;
  guestId?: string;
  guest?: GuestContactInput;
  /** Service tags of the venue added to the reservation's guest. */
  serviceTags?: string[];
  source?: CreateSource;
  sourceDetail?: string | null;
  status?: 'created' | 'confirmed';
  tableId?: string;
  tableCombinationId?: string;
  force?: boolean;
  /** A slot hold of this key to book (docs/reservations.md "Slot holds"). */
  holdId?: string;
  /** Not an API field: the party is at the venue now (a waiting-list conversion without a time), so it is booked now, outside the booking window. */
  startNow?: boolean;
}

/** docs/api.md "Keys, limits": what a publishable (widget) key may not send. */
const widgetForbidden = ['externalRef', 'serviceTags', 'guestId', 'tableId', 'tableCombinationId', 'status', 'source', 'force'] as const;

function checkPermissions(auth: AuthContext, input: CreateReservationInput): void {
  if (isPublishable(auth)) {
    const sent = widgetForbidden.filter((field) => input[field] !== undefined);
    if (sent.length) {
      throw new ApiError('forbidden', `A publishable key may not send ${sent.join(', ')}.`, { reason: 'publishable_key', fields: sent });
    }
    return;
  }
  // Choosing tables, overriding the engine and seating a walk-in are floor operations.
  const needsFloor =
    input.tableId !== undefined || input.tableCombinationId !== undefined || input.force === true || input.source === 'walk_in';
  if (needsFloor && !hasScope(auth, 'floor:write')) {
    throw new ApiError('insufficient_scope', 'Tables, force and walk-ins need the scope floor:write.', { requiredScope: 'floor:write' });
  }
}

function checkShape(input: CreateReservationInput): void {
  const walkIn = input.source === 'walk_in';
  const missing = walkIn || input.startNow ? [] : (['serviceDate', 'time'] as const).filter((f) => input[f] === undefined);
  if (missing.length) throw ApiError.invalid([...missing], `Missing: ${missing.join(', ')}.`);
  if (walkIn && input.status !== undefined) throw ApiError.invalid(['status'], 'A walk-in starts seated; status cannot be chosen.');
  if (walkIn && input.holdId !== undefined) throw ApiError.invalid(['holdId'], 'A walk-in starts now; it cannot book a hold.');
  if (input.tableId !== undefined && input.tableCombinationId !== undefined) {
    throw ApiError.invalid(['tableId', 'tableCombinationId'], 'Give a table or a combination, not both.');
  }
  if (input.guestId !== undefined && input.guest !== undefined)
    throw ApiError.invalid(['guestId', 'guest'], 'Give guestId or guest, not both.');
  if (input.serviceTags !== undefined && input.guestId === undefined && input.guest === undefined) {
    throw ApiError.invalid(['serviceTags'], 'Service tags belong to a guest: give guestId or guest.');
  }
}

/**
 * The guest of a new reservation: by id (of that venue), or found / created by phone (a widget's by
 * phone and name: findOrCreateWidgetGuest); service tags added.
 */
async function resolveGuest(
  tx: Tx,
  emit: Emit,
  venue: LoadedVenue,
  input: CreateReservationInput,
  auth: AuthContext,
): Promise<GuestRow | null> {
  const livemode = auth.livemode;
  let guest: GuestRow | null = null;
  if (input.guestId !== undefined) {
    guest = await getGuestForVenue(tx, venue.id, input.guestId);
    if (!guest) throw ApiError.invalid(['guestId'], 'No guest of this venue has this id.');
  } else if (input.guest !== undefined) {
    guest = isPublishable(auth)
      ? await findOrCreateWidgetGuest(tx, emit, venue, input.guest, livemode)
      : await findOrCreateGuestByPhone(tx, emit, venue, input.guest, livemode);
  }
  if (guest && input.serviceTags?.length) {
    const names = await resolveServiceTags(tx, venue.id, input.serviceTags);
    // Appended to the tags the row has now, in one statement: a tag renamed since the guest was read
    // has been rewritten on the row, and a copy taken before would put the old name back.
    const added = sql`array[${sql.join(
      names.map((n) => sql`${n}`),
      sql`, `,
    )}]::text[]`;
    const [updated] = await tx
      .update(guests)
      .set({
        serviceTags: sql`${guests.serviceTags} || array(select n from unnest(${added}) n where not n = any(${guests.serviceTags}))`,
        updatedAt: nextUpdatedAt(guests.updatedAt),
      })
      .where(and(eq(guests.id, guest.id), sql`not (${added} <@ ${guests.serviceTags})`))
      .returning();
    if (updated) {
      guest = updated;
      emit(guestChangedEvent(guest, 'service_tags_changed', livemode));
    }
  }
  return guest;
}

interface Slot {
  serviceDate: string;
  time: string;
}

/**
 * A walk-in starts now (docs/reservations.md). Just after midnight "now" may still be the previous
 * serviceDate's past-midnight shift: that serviceDate is tried when today has no shift then.
 */
function walkInSlot(config: VenueConfig, now: number): Slot {
  const local = instantToLocal(config.venue.timezone, now);
  const today = { serviceDate: local.date, time: formatMinutes(local.minutes) };
  if (resolveServiceTime(config.shifts, config.closures, today.serviceDate, today.time).outcome !== 'no_shift') return today;
  const previous = { serviceDate: addDays(local.date, -1), time: today.time };
  const resolution = resolveServiceTime(config.shifts, config.closures, previous.serviceDate, previous.time);
  return resolution.outcome !== 'no_shift' && resolution.minuteOfService >= MINUTES_PER_DAY ? previous : today;
}

/** docs/reservations.md "Slot holds": a booking of a hold repeats what was held; the fields that differ are named. */
function checkMatchesHold(input: CreateReservationInput, hold: HoldRow): void {
  const differing = [
    input.venueId !== hold.venueId && 'venueId',
    input.serviceDate !== hold.serviceDate && 'serviceDate',
    input.time !== hold.time && 'time',
    input.partySize !== hold.partySize && 'partySize',
    input.tableId !== undefined && input.tableId !== hold.tableId && 'tableId',
    input.tableCombinationId !== undefined && input.tableCombinationId !== hold.tableCombinationId && 'tableCombinationId',
  ].filter((f): f is string => f !== false);
  if (differing.length) throw ApiError.invalid(differing, `These fields differ from the hold: ${differing.join(', ')}.`);
}

/**
 * POST /reservations (docs/reservations.md): one transaction, evaluated again if the table moves it
 * planned went stale; 409 no_availability when the engine refuses.
 */
export async function createReservation(auth: AuthContext, input: CreateReservationInput, log: Logger = logger): Promise<ReservationParts> {
  return retryStaleMoves(() => transactionWithEvents(actorOf(auth), (tx, emit) => createReservationIn(tx, emit, auth, input), log));
}

/**
 * createReservation inside the caller's transaction (a waiting-list conversion changes its entry in
 * the same one): the caller runs it under retryStaleMoves.
 */
export async function createReservationIn(tx: Tx, emit: Emit, auth: AuthContext, input: CreateReservationInput): Promise<ReservationParts> {
  checkPermissions(auth, input);
  checkShape(input);
  const walkIn = input.source === 'walk_in';
  const startsNow = walkIn || input.startNow === true;
  const now = Date.now();
  // A booking's day is known before anything is read, except for one that starts now.
  const loaded = startsNow
    ? {
        ...(await loadVenueConfig(tx, auth, input.venueId, true)),
        bookings: null,
        reservationsKey: undefined,
        demand: await loadDemandCurve(tx, input.venueId, Date.now()),
      }
    : await loadVenueDayForBooking(tx, auth, input.venueId, input.serviceDate!);
  const { venue, config } = loaded;
  if (input.guest) normalisePhoneOrThrow(input.guest.phone, venue.countryCode);
  const slot: Slot = startsNow ? walkInSlot(config, now) : { serviceDate: input.serviceDate!, time: input.time! };
  const inputSeatingId = input.tableId ?? input.tableCombinationId;
  if (inputSeatingId !== undefined) namedSeating(config, input.tableId !== undefined ? 'tableId' : 'tableCombinationId', inputSeatingId);
  // A live hold is consumed here, under the booking's locks; a missing one changes only the reason of a refusal.
  const hold = input.holdId === undefined ? null : await consumeHold(tx, auth, input.holdId, now);
  if (hold) checkMatchesHold(input, hold);
  const refusal = (reason: Parameters<typeof noAvailability>[0]) => (input.holdId !== undefined && !hold ? 'hold_expired' : reason);
  const requestedSeatingId = hold ? heldSeatingId(hold) : inputSeatingId;
  const guest = await resolveGuest(tx, emit, venue, input, auth);
  let bookings = loaded.bookings;
  if (!bookings) {
    if (hasPacing(config)) await lockPacingDay(tx, venue.id, slot.serviceDate);
    bookings = await loadBookings(tx, venue.id, slot.serviceDate, slot.serviceDate);
  }
  // A held seating is booked as held: the hold itself (still in the loaded bookings) does not count against it, and
  // the minutes that passed since it was taken do not count against the booking window.
  const evaluate = (day: VenueDay): Evaluation =>
    day.evaluate(slot.time, input.partySize, {
      ignoreBookingWindow: startsNow || hold !== null,
      requestedSeatingId,
      allSeatings: true,
      reservationId: hold?.id,
    });
  const { day, evaluation } = await evaluateInTurn(
    tx,
    config,
    venue.id,
    new VenueDay(config, slot.serviceDate, bookings, now, { reservationsKey: loaded.reservationsKey, demand: loaded.demand }),
    evaluate,
    loaded.demand,
  );
  let timing: Timing;
  let seatings: readonly Seating[] = [];
  let moves: readonly TableMove[] = [];
  let forced = false;
  if (evaluation.available) {
    ({ timing, seatings, moves } = evaluation);
  } else if (input.force && evaluation.timing && (evaluation.reason === 'no_table' || evaluation.reason === 'pacing_full')) {
    // docs/reservations.md: booked anyway, without a table, to be arranged on the floor.
    timing = evaluation.timing;
    forced = true;
  } else {
    throw noAvailability(refusal(evaluation.reason), day.alternatives(slot.time, input.partySize));
  }

  const startsAt = new Date(timing.startsAt);
  const endsAt = new Date(timing.endsAt);
  const explicit = requestedSeatingId !== undefined;
  const first = seatings[0] ?? null;
  await applyTableMoves(tx, emit, venue.id, moves, auth.livemode, now);
  // The id is chosen here so that the first table can be taken in the same round trip as the
  // insert (pipelined: PostgreSQL runs them in order).
  const id = newId();
  let row: ReservationRow;
  let tookFirst: boolean;
  try {
    [row, tookFirst] = await Promise.all([
      insertReservationRow(tx, {
        id,
        organisationId: venue.organisationId,
        venueId: venue.id,
        serviceDate: slot.serviceDate,
        time: formatMinutes(timing.minuteOfService),
        startsAt,
        endsAt,
        partySize: input.partySize,
        status: walkIn ? 'seated' : (input.status ?? 'created'),
        ...seatingColumns(first),
        // docs/reservations.md "Table optimisation": a table chosen by the caller is never moved.
        tableLocked: inputSeatingId !== undefined,
        needsAttention: forced,
        notes: input.notes ?? null,
        source: input.source ?? 'api',
        sourceDetail: input.sourceDetail !== undefined ? input.sourceDetail : auth.keyName,
        externalRef: input.externalRef ?? null,
        guestId: guest?.id ?? null,
        arrivedAt: walkIn ? new Date(now) : null,
        seatedAt: walkIn ? new Date(now) : null,
      }),
      first ? occupySeating(tx, { reservationId: id }, venue.id, first, startsAt, endsAt) : Promise.resolve(false),
    ]);
  } catch (err) {
    throw externalRefConflict(err);
  }
  if (first) {
    let seating: Seating | null = first;
    if (!tookFirst) {
      // Lost to a concurrent booking: an explicit table is a conflict, an automatic choice moves on,
      // a seating freed by moves is evaluated again.
      if (explicit) throw noAvailability(refusal('conflict'), []);
      if (moves.length) throw new StaleMovesError();
      seating = await occupyFirstFree(tx, { reservationId: id }, venue.id, seatings.slice(1), startsAt, endsAt, false);
      if (!seating) throw noAvailability(refusal('no_table'), day.alternatives(slot.time, input.partySize));
      [row] = await tx
        .update(reservations)
        .set({ ...seatingColumns(seating), updatedAt: nextUpdatedAt(reservations.updatedAt) })
        .where(eq(reservations.id, row.id))
        .returning();
    }
    const parts: ReservationParts = { row, tables: seatedTablesOf(config, seating), guest };
    emitReservationEvents(emit, parts, ['reservation_created'], auth.livemode);
    return parts;
  }
  const parts: ReservationParts = { row, tables: [], guest };
  emitReservationEvents(emit, parts, ['reservation_created', 'reservation_needs_attention'], auth.livemode);
  return parts;
}
