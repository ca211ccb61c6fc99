import { and, eq, inArray } from 'drizzle-orm';
import { db, savepoint, type Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { reservations, reservationTables } from '../../db/schema/index.js';
import { hasScope, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { tableHoldingStatuses } from '../../lib/availability/occupancy.js';
import type { Seating } from '../../lib/availability/seatings.js';
import { canCancel, canMove, floorStatuses, statusEvents } from '../../lib/availability/status-transitions.js';
import type { ReservationEventType } from '../../lib/event-catalogue.js';
import type { ReservationStatus, VenueConfig } from '../../lib/availability/types.js';
import { VenueDay, seatingOf } from '../../lib/availability/venue-day.js';
import { formatMinutes } from '../../lib/shift-schedule.js';
import { loadBookings, type LoadedVenue, lockAndLoadVenueConfig } from '../availability/venue-day-loader.js';
import { hasPacing, lockPacingDay } from '../availability/venue-day-locks.js';
import { actorOf, transactionWithEvents, type Actor, type Emit } from '../outbox/outbox.js';
import { applyGuestStatusChange } from '../guests/guest-counters.js';
import type { GuestRow } from '../guests/guest-json.js';
import { getGuestForVenue } from '../guests/guest-service.js';
import { emitReservationEvents, reservationEventFields } from './reservation-events.js';
import type { ReservationParts, ReservationRow, SeatedTable } from './reservation-json.js';
import { loadReservationParts } from './reservation-view.js';
import { externalRefConflict } from './reservation-rows.js';
import {
  deleteOccupancy,
  isExclusionViolation,
  namedSeating,
  noAvailability,
  occupyFirstFree,
  seatedTablesOf,
  seatingColumns,
  setOccupancyLive,
} from './table-assignment.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';

export type PatchStatus = 'confirmed' | 'arrived' | 'seated' | 'released' | 'completed' | 'no_show';

export interface ReservationPatch {
  serviceDate?: string;
  time?: string;
  partySize?: number;
  notes?: string | null;
  status?: PatchStatus;
  tableId?: string | null;
  tableCombinationId?: string | null;
  tableLocked?: boolean;
  guestId?: string | null;
  externalRef?: string | null;
}

function invalidTransition(from: ReservationStatus, to: ReservationStatus | 'cancelled'): ApiError {
  return new ApiError('invalid_request', `A reservation cannot move from ${from} to ${to}.`, {
    reason: 'invalid_transition',
    fields: ['status'],
  });
}

function versionMismatch(row: ReservationRow): ApiError {
  return new ApiError('conflict', `The reservation changed since that version; it is now at ${row.updatedAt.toISOString()}.`, {
    reason: 'version_mismatch',
  });
}

/** The reservation row locked for this transaction, if the key may see it. */
async function lockVisibleReservation(tx: Tx, auth: AuthContext, id: string): Promise<ReservationRow> {
  const [row] = await tx
    .select()
    .from(reservations)
    .where(
      and(
        eq(reservations.id, id),
        eq(reservations.organisationId, auth.organisationId),
        auth.venueIds === null ? undefined : inArray(reservations.venueId, [...auth.venueIds]),
      ),
    )
    .for('update');
  if (!row) throw ApiError.notFound('Reservation');
  return row;
}

/** Which venue and day a reservation is on, read before the transaction so that locks are taken in their order. */
async function peekReservation(auth: AuthContext, id: string): Promise<Pick<ReservationRow, 'venueId' | 'serviceDate'>> {
  const [row] = await db()
    .select({ venueId: reservations.venueId, serviceDate: reservations.serviceDate })
    .from(reservations)
    .where(and(eq(reservations.id, id), eq(reservations.organisationId, auth.organisationId)));
  if (!row || (auth.venueIds !== null && !auth.venueIds.includes(row.venueId))) throw ApiError.notFound('Reservation');
  return row;
}

function checkVersion(row: ReservationRow, expected: Date | undefined): void {
  if (expected && row.updatedAt.getTime() !== expected.getTime()) throw versionMismatch(row);
}

function currentSeatingId(row: ReservationRow): string | null {
  return row.tableAssigned ? (row.tableId ?? row.tableCombinationId) : null;
}

/**
 * The table asked for by the patch: a seating id, null to remove the table, undefined when the
 * patch does not touch tables. 400 when it names something that is not in the active plan.
 */
function requestedSeating(config: VenueConfig, patch: ReservationPatch): Seating | null | undefined {
  if (patch.tableId === undefined && patch.tableCombinationId === undefined) return undefined;
  const field = patch.tableId ? 'tableId' : patch.tableCombinationId ? 'tableCombinationId' : null;
  return field ? namedSeating(config, field, patch[field]!) : null;
}

/** The instants a status move stamps on the row. */
function statusStamps(row: ReservationRow, to: ReservationStatus, now: Date): Partial<ReservationRow> {
  switch (to) {
    case 'arrived':
      return { arrivedAt: now };
    case 'seated':
      return { seatedAt: now, arrivedAt: row.arrivedAt ?? now };
    case 'released':
      return { freedAt: now };
    case 'completed':
      return { completedAt: now, freedAt: row.freedAt ?? now };
    case 'no_show':
      return { noShowAt: now };
    case 'cancelled':
      return { cancelledAt: now };
    default:
      return {};
  }
}

/**
 * A no_show that turns out to be a late arrival takes its tables back when they are still valid
 * and free; otherwise it keeps its time without a table and needs attention (docs/venue-configuration.md).
 */
async function retakeTables(tx: Tx, config: VenueConfig, row: ReservationRow): Promise<boolean> {
  const seatingId = currentSeatingId(row);
  if (!seatingId) return true;
  const seating = seatingOf(config, seatingId);
  if (seating && !seating.isBlocked) {
    try {
      await savepoint(tx, async (sp) => {
        await sp.update(reservationTables).set({ live: true }).where(eq(reservationTables.reservationId, row.id));
      });
      return true;
    } catch (err) {
      if (!isExclusionViolation(err)) throw err;
    }
  }
  await deleteOccupancy(tx, row.id);
  return false;
}

/** Whether the reservation, counted again, takes its pacing block over maxCovers; under the day's pacing lock. */
async function exceedsPacingNow(tx: Tx, config: VenueConfig, row: ReservationRow, now: number): Promise<boolean> {
  const bookings = await loadBookings(tx, row.venueId, row.serviceDate, row.serviceDate);
  return new VenueDay(config, row.serviceDate, bookings, now).exceedsPacing(row.time, row.partySize, row.id);
}

/** PATCH /reservations/:id (docs/reservations.md). Every change is one transaction; nothing changes on a refusal. */
export async function updateReservation(
  auth: AuthContext,
  id: string,
  patch: ReservationPatch,
  expectedVersion?: Date,
  actor: Actor = actorOf(auth),
  log: Logger = logger,
): Promise<ReservationParts> {
  checkChangeRequest(auth, patch);
  const peek = await peekReservation(auth, id);
  const now = Date.now();
  return transactionWithEvents(
    actor,
    async (tx, emit) => {
      const change = await lockChange(tx, auth, id, patch, peek, expectedVersion);
      const plan = newChangePlan(change);
      if (change.scheduleChanged || change.tableChanged) await reseat(tx, change, plan, now);
      if (change.to !== change.from) await changeStatus(tx, change, plan, now);
      await changeFields(tx, change, plan);
      return writeChange(tx, emit, auth, change, plan);
    },
    log,
    auth.signal,
  );
}

/** Step 1: who may send what (floor statuses and tables need floor:write), and which fields go together. */
function checkChangeRequest(auth: AuthContext, patch: ReservationPatch): void {
  const needsFloor =
    (patch.status !== undefined && floorStatuses.has(patch.status)) ||
    patch.tableId !== undefined ||
    patch.tableCombinationId !== undefined ||
    patch.tableLocked !== undefined;
  if (needsFloor && !hasScope(auth, 'floor:write')) {
    throw new ApiError('insufficient_scope', 'These statuses and table changes need the scope floor:write.', {
      requiredScope: 'floor:write',
    });
  }
  if (patch.tableId && patch.tableCombinationId)
    throw ApiError.invalid(['tableId', 'tableCombinationId'], 'Give a table or a combination, not both.');
}

/** Step 2's output: the reservation as locked, and what the patch asks of it. */
interface LockedChange {
  patch: ReservationPatch;
  venue: LoadedVenue;
  config: VenueConfig;
  row: ReservationRow;
  /** The day whose pacing lock is held, when the change may make covers count again. */
  pacingDay: string | null;
  from: ReservationStatus;
  to: ReservationStatus;
  target: { serviceDate: string; time: string; partySize: number };
  scheduleChanged: boolean;
  /** The seating the patch names: undefined not named, null removed. */
  requested: Seating | null | undefined;
  current: string | null;
  tableChanged: boolean;
}

/**
 * Step 2: the locks in every writer's order (venue row, pacing lock, reservation row), the version
 * checked, and what the patch asks checked against the reservation as it is now. The pacing lock is
 * taken by every change that may make covers count again: a move, a table given (it may clear
 * needsAttention), a status that can take a no_show back.
 */
async function lockChange(
  tx: Tx,
  auth: AuthContext,
  id: string,
  patch: ReservationPatch,
  peek: Pick<ReservationRow, 'venueId' | 'serviceDate'>,
  expectedVersion: Date | undefined,
): Promise<LockedChange> {
  const { venue, config } = await lockAndLoadVenueConfig(tx, auth, peek.venueId);
  const mayMove = patch.serviceDate !== undefined || patch.time !== undefined || patch.partySize !== undefined;
  const mayAddCovers =
    mayMove ||
    patch.tableId !== undefined ||
    patch.tableCombinationId !== undefined ||
    patch.status === 'arrived' ||
    patch.status === 'seated';
  const pacingDay = mayAddCovers && hasPacing(config) ? (patch.serviceDate ?? peek.serviceDate) : null;
  if (pacingDay) await lockPacingDay(tx, venue.id, pacingDay);
  const row = await lockVisibleReservation(tx, auth, id);
  checkVersion(row, expectedVersion);
  if (pacingDay && patch.serviceDate === undefined && row.serviceDate !== peek.serviceDate) {
    throw new ApiError('conflict', 'The reservation was moved concurrently; repeat the request.', { reason: 'concurrent_change' });
  }
  const from = row.status;
  const to: ReservationStatus = patch.status ?? from;
  if (to !== from && !canMove(from, to)) throw invalidTransition(from, to);
  const target = {
    serviceDate: patch.serviceDate ?? row.serviceDate,
    time: patch.time ?? row.time,
    partySize: patch.partySize ?? row.partySize,
  };
  const scheduleChanged = target.serviceDate !== row.serviceDate || target.time !== row.time || target.partySize !== row.partySize;
  const requested = requestedSeating(config, patch);
  const current = currentSeatingId(row);
  const tableChanged = requested !== undefined && (requested?.id ?? null) !== current;
  if ((scheduleChanged || tableChanged) && (!tableHoldingStatuses.has(from) || !tableHoldingStatuses.has(to))) {
    const fields = (['serviceDate', 'time', 'partySize', 'tableId', 'tableCombinationId'] as const).filter((f) => patch[f] !== undefined);
    throw ApiError.invalid(
      fields,
      `A ${tableHoldingStatuses.has(from) ? to : from} reservation can no longer be moved or seated elsewhere.`,
    );
  }
  return { patch, venue, config, row, pacingDay, from, to, target, scheduleChanged, requested, current, tableChanged };
}

/** What the change writes, built up by the steps: the row's new columns, its events and its flags. */
interface ChangePlan {
  set: Partial<typeof reservations.$inferInsert>;
  events: Set<ReservationEventType>;
  needsAttention: boolean;
  tableLocked: boolean;
  /** The tables seated after the change, when it changed them. */
  tables?: readonly SeatedTable[];
  /** The guest after the change, when it changed it (null: none). */
  guest?: GuestRow | null;
}

/** docs/reservations.md "Table optimisation": a table given explicitly is locked, a removed one unlocked. */
function newChangePlan({ row, requested }: LockedChange): ChangePlan {
  return {
    set: {},
    events: new Set(),
    needsAttention: row.needsAttention,
    tableLocked: requested === undefined ? row.tableLocked : requested !== null,
  };
}

/**
 * Step 3: a new time, date or party size is evaluated by the engine (parties already at the venue
 * whatever the booking window says), a table given is checked; the reservation's tables are taken
 * again, the first free of the seatings.
 */
async function reseat(tx: Tx, change: LockedChange, plan: ChangePlan, now: number): Promise<void> {
  const { row, target, requested, current, config, venue, from, to } = change;
  const onSite = from === 'arrived' || from === 'seated' || to === 'arrived' || to === 'seated';
  const day = new VenueDay(config, target.serviceDate, await loadBookings(tx, venue.id, target.serviceDate, target.serviceDate), now);
  let seatings: readonly Seating[] = [];
  let startsAt = row.startsAt;
  let endsAt = row.endsAt;
  if (change.scheduleChanged) {
    const evaluation = day.evaluate(target.time, target.partySize, {
      reservationId: row.id,
      ignoreBookingWindow: onSite,
      requestedSeatingId: requested?.id,
      preferredSeatingId: requested === undefined ? (current ?? undefined) : undefined,
      withoutTable: requested === null,
      allSeatings: true,
    });
    if (!evaluation.available)
      throw noAvailability(evaluation.reason, day.alternatives(target.time, target.partySize, { reservationId: row.id }));
    seatings = evaluation.seatings;
    startsAt = new Date(evaluation.timing.startsAt);
    endsAt = new Date(evaluation.timing.endsAt);
    const time = formatMinutes(evaluation.timing.minuteOfService);
    Object.assign(plan.set, { serviceDate: target.serviceDate, time, partySize: target.partySize, startsAt, endsAt });
    plan.events.add('reservation_modified');
  } else if (requested) {
    const verdict = day.seatingVerdict(requested.id, row.partySize, row.startsAt.getTime(), row.endsAt.getTime(), row.id);
    if (verdict !== 'ok') throw noAvailability(verdict, []);
    seatings = [requested];
  }
  await deleteOccupancy(tx, row.id);
  const seating = seatings.length
    ? await occupyFirstFree(tx, { reservationId: row.id }, venue.id, seatings, startsAt, endsAt, requested !== undefined)
    : null;
  if (seatings.length && !seating)
    throw noAvailability('no_table', day.alternatives(target.time, target.partySize, { reservationId: row.id }));
  Object.assign(plan.set, seatingColumns(seating));
  plan.tables = seatedTablesOf(config, seating);
  // A move the engine seated elsewhere is its choice, no longer the one that was locked.
  if (requested === undefined && (seating?.id ?? null) !== current) plan.tableLocked = false;
  // A table given to a reservation flagged for attention clears the flag only within pacing
  // (a move was judged by the engine, pacing included).
  plan.needsAttention =
    seating === null || (!change.scheduleChanged && change.pacingDay !== null && day.exceedsPacing(row.time, row.partySize, row.id));
}

/**
 * Step 4: the new status with its stamps and events; tables freed when it stops holding them, taken
 * again when it holds them again (a late guest is let in even over pacing: the floor arranges it,
 * docs/reservations.md "Pacing and tables after a change"); the guest's counters.
 */
async function changeStatus(tx: Tx, { row, from, to, config, pacingDay }: LockedChange, plan: ChangePlan, now: number): Promise<void> {
  const nowDate = new Date(now);
  Object.assign(plan.set, { status: to }, statusStamps(row, to, nowDate));
  for (const type of statusEvents(from, to)) plan.events.add(type);
  const held = tableHoldingStatuses.has(from);
  const holds = tableHoldingStatuses.has(to);
  if (held && !holds) await setOccupancyLive(tx, row.id, false);
  if (!held && holds) {
    if (!(await retakeTables(tx, config, row))) {
      Object.assign(plan.set, seatingColumns(null));
      plan.tables = [];
      plan.needsAttention = true;
    }
    if (pacingDay !== null && (await exceedsPacingNow(tx, config, row, now))) plan.needsAttention = true;
  }
  if (row.guestId) await applyGuestStatusChange(tx, row.guestId, from, to, nowDate);
}

/** Step 5: notes, externalRef, the guest (of the venue), the table lock and the attention flag. */
async function changeFields(tx: Tx, { patch, row, venue }: LockedChange, plan: ChangePlan): Promise<void> {
  if (patch.notes !== undefined && patch.notes !== row.notes) {
    plan.set.notes = patch.notes;
    plan.events.add('reservation_modified');
  }
  if (patch.externalRef !== undefined && patch.externalRef !== row.externalRef) plan.set.externalRef = patch.externalRef;
  if (patch.guestId !== undefined && patch.guestId !== row.guestId) {
    if (patch.guestId !== null) {
      plan.guest = await getGuestForVenue(tx, venue.id, patch.guestId);
      if (!plan.guest) throw ApiError.invalid(['guestId'], 'No guest of this venue has this id.');
    } else plan.guest = null;
    plan.set.guestId = patch.guestId;
  }
  if (plan.needsAttention !== row.needsAttention) plan.set.needsAttention = plan.needsAttention;
  const tableLocked = patch.tableLocked ?? plan.tableLocked;
  if (tableLocked !== row.tableLocked) plan.set.tableLocked = tableLocked;
  if (plan.needsAttention && !row.needsAttention) plan.events.add('reservation_needs_attention');
}

/** Step 6: the row written (unchanged when nothing changed) and the events emitted; a change without an event of the catalogue (table, guest, externalRef) is kept for the history alone. */
async function writeChange(tx: Tx, emit: Emit, auth: AuthContext, { row }: LockedChange, plan: ChangePlan): Promise<ReservationParts> {
  if (Object.keys(plan.set).length === 0) return (await loadReservationParts(tx, [row]))[0];
  let updated: ReservationRow;
  try {
    [updated] = await tx
      .update(reservations)
      .set({ ...plan.set, updatedAt: nextUpdatedAt(reservations.updatedAt) })
      .where(eq(reservations.id, row.id))
      .returning();
  } catch (err) {
    throw externalRefConflict(err);
  }
  const [loaded] = await loadReservationParts(tx, [updated]);
  const parts: ReservationParts = {
    row: updated,
    tables: plan.tables ?? loaded.tables,
    guest: plan.guest !== undefined ? plan.guest : loaded.guest,
  };
  if (plan.events.size) emitReservationEvents(emit, parts, plan.events, auth.livemode);
  else emit({ ...reservationEventFields(parts, auth.livemode), type: 'reservation_updated', published: false });
  return parts;
}

/** DELETE /reservations/:id: cancels from created, confirmed or arrived; an already cancelled reservation answers unchanged. */
export async function cancelReservation(
  auth: AuthContext,
  id: string,
  expectedVersion?: Date,
  log: Logger = logger,
): Promise<ReservationParts> {
  return transactionWithEvents(
    actorOf(auth),
    async (tx, emit) => {
      const row = await lockVisibleReservation(tx, auth, id);
      if (row.status === 'cancelled') return (await loadReservationParts(tx, [row]))[0];
      checkVersion(row, expectedVersion);
      if (!canCancel(row.status)) throw invalidTransition(row.status, 'cancelled');
      const now = new Date();
      await setOccupancyLive(tx, row.id, false);
      if (row.guestId) await applyGuestStatusChange(tx, row.guestId, row.status, 'cancelled', now);
      const [updated] = await tx
        .update(reservations)
        .set({ status: 'cancelled', ...statusStamps(row, 'cancelled', now), updatedAt: nextUpdatedAt(reservations.updatedAt) })
        .where(eq(reservations.id, row.id))
        .returning();
      const [parts] = await loadReservationParts(tx, [updated]);
      emitReservationEvents(emit, parts, ['reservation_cancelled'], auth.livemode);
      return parts;
    },
    log,
    auth.signal,
  );
}
