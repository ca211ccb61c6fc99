import { eq, inArray } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { nextUpdatedAt } from '../../db/schema/columns.js';
import { reservations, reservationTables } from '../../db/schema/index.js';
import type { DemandCurve } from '../../lib/availability/demand-curve.js';
import { MOVABLE_NOTICE_MINUTES, type TableMove } from '../../lib/availability/table-optimiser.js';
import { hasSqlState } from '../../lib/error-causes.js';
import type { VenueConfig } from '../../lib/availability/types.js';
import { VenueDay, type Evaluation } from '../../lib/availability/venue-day.js';
import { loadBookings } from '../availability/venue-day-loader.js';
import { hasPacing, lockTableMovesDay } from '../availability/venue-day-locks.js';
import { systemActor, type Emit } from '../outbox/outbox.js';
import { reservationEventFields } from './reservation-events.js';
import { loadReservationParts } from './reservation-view.js';
import { noAvailability, occupySeating, seatingColumns } from './table-assignment.js';

const MINUTE_MS = 60_000;

/** docs/reservations.md "Table optimisation": the history of a moved party names this actor. */
export const tableOptimiserActor = systemActor('table-optimiser');

/**
 * The plan of the table optimiser no longer holds: since the day was read, a party to move was
 * changed, locked or cancelled, or a table it was to take was taken. Nothing of the plan is kept
 * (the transaction rolls back) and the booking is evaluated again (retryBookingTransaction).
 */
export class StaleMovesError extends Error {
  constructor() {
    super('The table moves planned for this booking no longer hold.');
  }
}

/**
 * A fresh evaluation sees what made the plan stale, so a second or third one nearly always settles;
 * a floor rewritten faster than that answers the race as a lost one.
 */
const MAX_ATTEMPTS = 3;

/**
 * Moving parties locks their rows after the booking's own writes (a consumed hold, a guest): a PATCH
 * of one of them waiting on those can deadlock with it, and PostgreSQL then rolls one of the two
 * back. The booking's transaction is whole, so running it again is safe.
 */
const isDeadlock = (err: unknown) => hasSqlState(err, '40P01');

/** Runs a booking transaction again while its table moves went stale (or deadlocked); then 409 no_availability, reason conflict. */
export async function retryBookingTransaction<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof StaleMovesError) && !isDeadlock(err)) throw err;
      if (attempt === MAX_ATTEMPTS) throw noAvailability('conflict', []);
    }
  }
}

/**
 * A booking's (or hold's) evaluation, decided in turn when it moves parties (docs/reservations.md
 * "Table optimisation"): the first plan was made against the day as read with the booking's other
 * locks; when it moves parties, the day's table-moves lock is taken and the plan made again against
 * the reservations as they are then, so that it sees every move committed before it rather than
 * racing them. Bookings that need no moves never wait. With pacing rules the pacing lock, held
 * already, serialises the day's bookings: the first plan stands.
 */
export async function evaluateInTurn(
  tx: Tx,
  config: VenueConfig,
  venueId: string,
  first: VenueDay,
  evaluate: (day: VenueDay) => Evaluation,
  demand: DemandCurve,
): Promise<{ day: VenueDay; evaluation: Evaluation }> {
  const evaluation = evaluate(first);
  if (!evaluation.available || !evaluation.moves.length || hasPacing(config)) return { day: first, evaluation };
  await lockTableMovesDay(tx, venueId, first.serviceDate);
  const bookings = await loadBookings(tx, venueId, first.serviceDate, first.serviceDate);
  const day = new VenueDay(config, first.serviceDate, bookings, first.now, { demand });
  return { day, evaluation: evaluate(day) };
}

const sameTables = (a: readonly string[], b: readonly string[]) => a.length === b.length && [...a].sort().join() === [...b].sort().join();

/**
 * Moves the parties of the plan to their new tables, in the booking's transaction and before its own
 * tables are taken. The rows are locked in id order (two bookings moving the same parties queue
 * rather than deadlock), then checked to be as the plan saw them; all their tables are freed before
 * any is taken again (two parties may swap), and the exclusion constraint judges each new seating.
 * Each moved party gets a history row of the table optimiser; no webhook (a table change alone emits
 * none). Throws StaleMovesError when the plan no longer holds.
 */
export async function applyTableMoves(
  tx: Tx,
  emit: Emit,
  venueId: string,
  moves: readonly TableMove[],
  livemode: boolean,
  now: number,
): Promise<void> {
  if (!moves.length) return;
  const byId = new Map(moves.map((m) => [m.reservationId, m]));
  const ids = [...byId.keys()].sort();
  const rows = await tx.select().from(reservations).where(inArray(reservations.id, ids)).orderBy(reservations.id).for('update');
  const asPlanned = rows.filter((r) => {
    const move = byId.get(r.id)!;
    return (
      (r.status === 'created' || r.status === 'confirmed') &&
      !r.tableLocked &&
      r.venueId === venueId &&
      r.partySize === move.partySize &&
      r.startsAt.getTime() === move.startsAt &&
      r.endsAt.getTime() === move.endsAt &&
      r.startsAt.getTime() >= now + MOVABLE_NOTICE_MINUTES * MINUTE_MS
    );
  });
  if (asPlanned.length !== ids.length) throw new StaleMovesError();
  const freed = await tx
    .delete(reservationTables)
    .where(inArray(reservationTables.reservationId, ids))
    .returning({ reservationId: reservationTables.reservationId, tableId: reservationTables.tableId });
  for (const id of ids) {
    const tables = freed.filter((f) => f.reservationId === id).map((f) => f.tableId);
    if (!sameTables(tables, byId.get(id)!.fromTableIds)) throw new StaleMovesError();
  }
  const moved = [];
  for (const row of rows) {
    const { toSeating } = byId.get(row.id)!;
    if (!(await occupySeating(tx, { reservationId: row.id }, venueId, toSeating, row.startsAt, row.endsAt))) throw new StaleMovesError();
    const [updated] = await tx
      .update(reservations)
      .set({ ...seatingColumns(toSeating), updatedAt: nextUpdatedAt(reservations.updatedAt) })
      .where(eq(reservations.id, row.id))
      .returning();
    moved.push(updated);
  }
  for (const parts of await loadReservationParts(tx, moved)) {
    emit({ ...reservationEventFields(parts, livemode), type: 'reservation_updated', published: false, actor: tableOptimiserActor });
  }
}
