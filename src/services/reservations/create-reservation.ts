import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { guests, reservations } from '../../db/schema/index.js';
import { isPublishable, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import type { Seating } from '../../lib/availability/seatings.js';
import type { VenueConfig } from '../../lib/availability/types.js';
import type { DemandCurve } from '../../lib/availability/demand-curve.js';
import { decideSeating, type SeatingDecision } from '../../lib/availability/decide-seating.js';
import { VenueDay, type Evaluation } from '../../lib/availability/venue-day.js';
import { addDays, instantToLocal } from '../../lib/local-time.js';
import { formatMinutes, resolveServiceTime, MINUTES_PER_DAY } from '../../lib/shift-schedule.js';
import {
  loadBookings,
  loadDemandCurve,
  type LoadedVenue,
  lockAndLoadBookingDay,
  lockAndLoadVenueConfig,
} from '../availability/venue-day-loader.js';
import { hasPacing, lockPacingDay } from '../availability/venue-day-locks.js';
import { actorOf, transactionWithEvents, type Emit } from '../outbox/outbox.js';
import { consumeHold, heldSeatingId, type HoldRow } from '../holds/hold-service.js';
import type { GuestRow } from '../guests/guest-json.js';
import {
  findOrCreateGuest,
  findOrCreateWidgetGuest,
  getGuestForVenue,
  guestChangedEvent,
  parsePhoneOrThrow,
} from '../guests/guest-service.js';
import { resolveServiceTags } from '../guests/service-tag-service.js';
import type { ReservationEventType } from '../../lib/event-catalogue.js';
import { emitReservationEvents } from './reservation-events.js';
import type { ReservationParts, ReservationRow } from './reservation-json.js';
import { externalRefConflict, insertReservationRow } from './reservation-rows.js';
import { namedSeating, noAvailability, occupyFirstFree, occupySeating, seatedTablesOf, seatingColumns } from './table-assignment.js';
import { applyTableMoves, evaluateInTurn, retryBookingTransaction, StaleMovesError } from './table-moves.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { checkMatchesHold, checkRequest, type CheckedBooking, type CreateReservationInput } from './booking-request.js';
import { newId } from '../../lib/uuid-v7.js';
import type { Phone } from '../../lib/phone.js';

/**
 * The guest of a new reservation: by id (of that venue), or found / created by `phone` (parsed once,
 * from the input's guest; a widget's by phone and name: findOrCreateWidgetGuest); service tags added.
 */
async function resolveGuest(
  tx: Tx,
  emit: Emit,
  venue: LoadedVenue,
  input: CreateReservationInput,
  phone: Phone | null,
  auth: AuthContext,
): Promise<GuestRow | null> {
  const livemode = auth.livemode;
  let guest: GuestRow | null = null;
  if (input.guestId !== undefined) {
    guest = await getGuestForVenue(tx, venue.id, input.guestId);
    if (!guest) throw ApiError.invalid(['guestId'], 'No guest of this venue has this id.');
  } else if (input.guest !== undefined && phone !== null) {
    const wanted = { venue, phone, contact: input.guest, livemode };
    guest = isPublishable(auth) ? await findOrCreateWidgetGuest(tx, emit, wanted) : await findOrCreateGuest(tx, emit, wanted);
  }
  if (guest && input.serviceTags?.length) guest = await addServiceTags(tx, emit, guest, input.serviceTags, livemode);
  return guest;
}

/** Adds the venue's service tags `tags` to the guest's, and emits the change when there was one. */
async function addServiceTags(tx: Tx, emit: Emit, guest: GuestRow, tags: string[], livemode: boolean): Promise<GuestRow> {
  const names = await resolveServiceTags(tx, guest.venueId, tags);
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
  if (!updated) return guest;
  emit(guestChangedEvent(updated, 'service_tags_changed', livemode));
  return updated;
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

/**
 * POST /reservations (docs/reservations.md): one transaction, run again if the table moves it
 * planned went stale; 409 no_availability when the engine refuses.
 */
export async function createReservation(auth: AuthContext, input: CreateReservationInput, log: Logger = logger): Promise<ReservationParts> {
  return retryBookingTransaction(() =>
    transactionWithEvents(actorOf(auth), (tx, emit) => createReservationIn(tx, emit, auth, input), log, auth.signal),
  );
}

/**
 * createReservation inside the caller's transaction (a waiting-list conversion changes its entry in
 * the same one): the caller runs it under retryBookingTransaction. The steps, each with its own input and
 * output: the request checked, the booking's context loaded (venue day under its locks, hold,
 * guest), the engine's evaluation and the decision on it, the rows written, the events emitted.
 */
export async function createReservationIn(tx: Tx, emit: Emit, auth: AuthContext, input: CreateReservationInput): Promise<ReservationParts> {
  const request = checkRequest(auth, input, Date.now());
  const context = await loadBookingContext(tx, emit, auth, request);
  const { day, decision } = await decideBooking(tx, request, context);
  if (decision.kind === 'refuse')
    throw noAvailability(context.refusal(decision.reason), day.alternatives(context.slot.time, input.partySize));
  const written = await writeReservation(tx, emit, auth, request, context, day, decision);
  const events: ReservationEventType[] = written.seating ? ['reservation_created'] : ['reservation_created', 'reservation_needs_attention'];
  const parts: ReservationParts = { row: written.row, tables: seatedTablesOf(context.config, written.seating), guest: context.guest };
  emitReservationEvents(emit, parts, events, auth.livemode);
  return parts;
}

/** Step 2's output: what the decision and the writes need. */
interface BookingContext {
  venue: LoadedVenue;
  config: VenueConfig;
  slot: Slot;
  /** The first VenueDay, before any table moves are planned. */
  day: VenueDay;
  demand: DemandCurve;
  hold: HoldRow | null;
  /** The seating the caller named (tableId, tableCombinationId) or the hold holds. */
  requestedSeatingId: string | undefined;
  guest: GuestRow | null;
  /** The reason a refusal gives: a hold that was asked for and is gone makes it `hold_expired`. */
  refusal: (reason: Parameters<typeof noAvailability>[0]) => Parameters<typeof noAvailability>[0];
}

/**
 * Step 2: the venue day read under the booking's locks (a booking that starts now learns its day
 * first), the phone parsed once, the hold consumed, the guest found or created.
 */
async function loadBookingContext(tx: Tx, emit: Emit, auth: AuthContext, request: CheckedBooking): Promise<BookingContext> {
  const { input, startsNow, now } = request;
  const loaded = startsNow
    ? await loadVenueNow(tx, auth, input.venueId)
    : await lockAndLoadBookingDay(tx, auth, input.venueId, input.serviceDate!);
  const { venue, config, demand } = loaded;
  const phone = input.guest ? parsePhoneOrThrow(input.guest.phone, venue.countryCode) : null;
  const slot: Slot = startsNow ? walkInSlot(config, now) : { serviceDate: input.serviceDate!, time: input.time! };
  const inputSeatingId = input.tableId ?? input.tableCombinationId;
  if (inputSeatingId !== undefined) namedSeating(config, input.tableId !== undefined ? 'tableId' : 'tableCombinationId', inputSeatingId);
  // A live hold is consumed here, under the booking's locks; a missing one changes only the reason of a refusal.
  const hold = input.holdId === undefined ? null : await consumeHold(tx, auth, input.holdId, now);
  if (hold) checkMatchesHold(input, hold);
  const guest = await resolveGuest(tx, emit, venue, input, phone, auth);
  let bookings = loaded.bookings;
  if (!bookings) {
    if (hasPacing(config)) await lockPacingDay(tx, venue.id, slot.serviceDate);
    bookings = await loadBookings(tx, venue.id, slot.serviceDate, slot.serviceDate);
  }
  return {
    venue,
    config,
    slot,
    day: new VenueDay(config, slot.serviceDate, bookings, now, { reservationsKey: loaded.reservationsKey, demand }),
    demand,
    hold,
    requestedSeatingId: hold ? heldSeatingId(hold) : inputSeatingId,
    guest,
    refusal: (reason) => (input.holdId !== undefined && !hold ? 'hold_expired' : reason),
  };
}

/** For a booking that starts now: the venue under its lock; its day's reservations are read once the day is known. */
async function loadVenueNow(tx: Tx, auth: AuthContext, venueId: string) {
  const { venue, config } = await lockAndLoadVenueConfig(tx, auth, venueId);
  return { venue, config, bookings: null, reservationsKey: undefined, demand: await loadDemandCurve(tx, venueId, Date.now()) };
}

/**
 * Step 3: the engine's evaluation, made again under the day's table-moves lock when it moves
 * parties (evaluateInTurn), and the decision on it (decideSeating). A held seating is booked as
 * held: the hold itself (still in the loaded bookings) does not count against it, and the minutes
 * since it was taken do not count against the booking window.
 */
async function decideBooking(
  tx: Tx,
  request: CheckedBooking,
  context: BookingContext,
): Promise<{ day: VenueDay; decision: SeatingDecision }> {
  const { input, startsNow } = request;
  const { slot, hold } = context;
  const evaluate = (day: VenueDay): Evaluation =>
    day.evaluate(slot.time, input.partySize, {
      ignoreBookingWindow: startsNow || hold !== null,
      requestedSeatingId: context.requestedSeatingId,
      allSeatings: true,
      reservationId: hold?.id,
    });
  const { day, evaluation } = await evaluateInTurn(tx, context.config, context.venue.id, context.day, evaluate, context.demand);
  return { day, decision: decideSeating(evaluation, input.force === true) };
}

/** Step 4's output: the reservation's row and the seating it took (null: booked without a table). */
interface WrittenReservation {
  row: ReservationRow;
  seating: Seating | null;
}

/**
 * Step 4: the planned moves, then the reservation's row and its first seating in one round trip
 * (pipelined: PostgreSQL runs them in order; the id is chosen here so that both can be sent at once).
 * A seating lost to a concurrent booking: a named one is a conflict, an automatic choice moves on to
 * the next free one, a seating freed by moves is evaluated again (StaleMovesError).
 */
async function writeReservation(
  tx: Tx,
  emit: Emit,
  auth: AuthContext,
  request: CheckedBooking,
  context: BookingContext,
  day: VenueDay,
  decision: Exclude<SeatingDecision, { kind: 'refuse' }>,
): Promise<WrittenReservation> {
  const { venue, slot } = context;
  const seatings = decision.kind === 'seat' ? decision.seatings : [];
  await applyTableMoves(tx, emit, venue.id, decision.kind === 'seat' ? decision.moves : [], auth.livemode, request.now);
  const startsAt = new Date(decision.timing.startsAt);
  const endsAt = new Date(decision.timing.endsAt);
  const id = newId();
  const first = seatings[0] ?? null;
  let row: ReservationRow;
  let tookFirst: boolean;
  try {
    [row, tookFirst] = await Promise.all([
      insertReservationRow(tx, reservationValues(id, auth, request, context, decision, first)),
      first ? occupySeating(tx, { reservationId: id }, venue.id, first, startsAt, endsAt) : Promise.resolve(false),
    ]);
  } catch (err) {
    throw externalRefConflict(err);
  }
  if (!first || tookFirst) return { row, seating: first };
  if (context.requestedSeatingId !== undefined) throw noAvailability(context.refusal('conflict'), []);
  if (decision.kind === 'seat' && decision.moves.length) throw new StaleMovesError();
  const seating = await occupyFirstFree(tx, { reservationId: id }, venue.id, seatings.slice(1), startsAt, endsAt, false);
  if (!seating) throw noAvailability(context.refusal('no_table'), day.alternatives(slot.time, request.input.partySize));
  [row] = await tx
    .update(reservations)
    .set({ ...seatingColumns(seating), updatedAt: nextUpdatedAt(reservations.updatedAt) })
    .where(eq(reservations.id, row.id))
    .returning();
  return { row, seating };
}

/** The new row's columns (docs/reservations.md): a walk-in starts seated now; a forced booking needs attention. */
function reservationValues(
  id: string,
  auth: AuthContext,
  { input, walkIn, now }: CheckedBooking,
  { venue, slot, guest }: BookingContext,
  decision: Exclude<SeatingDecision, { kind: 'refuse' }>,
  first: Seating | null,
): typeof reservations.$inferInsert {
  return {
    id,
    organisationId: venue.organisationId,
    venueId: venue.id,
    serviceDate: slot.serviceDate,
    time: formatMinutes(decision.timing.minuteOfService),
    startsAt: new Date(decision.timing.startsAt),
    endsAt: new Date(decision.timing.endsAt),
    partySize: input.partySize,
    status: walkIn ? 'seated' : (input.status ?? 'created'),
    ...seatingColumns(first),
    // docs/reservations.md "Table optimisation": a table chosen by the caller is never moved.
    tableLocked: (input.tableId ?? input.tableCombinationId) !== undefined,
    needsAttention: decision.kind === 'force',
    notes: input.notes ?? null,
    source: input.source ?? 'api',
    sourceDetail: input.sourceDetail !== undefined ? input.sourceDetail : auth.keyName,
    externalRef: input.externalRef ?? null,
    guestId: guest?.id ?? null,
    arrivedAt: walkIn ? new Date(now) : null,
    seatedAt: walkIn ? new Date(now) : null,
  };
}
