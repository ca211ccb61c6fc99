import { and, eq, sql } from 'drizzle-orm';
import type { Tx } from '../../db/client.js';
import { insertRows } from '../../db/insert-rows.js';
import { reservationTables } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { hasSqlState } from '../../lib/error-causes.js';
import type { Seating } from '../../lib/availability/seatings.js';
import type { Proposal, UnavailableReason, VenueConfig } from '../../lib/availability/types.js';
import { seatingOf } from '../../lib/availability/venue-day.js';
import type { SeatedTable } from './reservation-json.js';

/** The PostgreSQL error of the occupancy exclusion constraint: another live reservation holds the table then. */
export function isExclusionViolation(err: unknown): boolean {
  return hasSqlState(err, '23P01');
}

export function duringRange(startsAt: Date | number, endsAt: Date | number): string {
  return `[${new Date(startsAt).toISOString()},${new Date(endsAt).toISOString()})`;
}

/** Whose occupancy rows: a reservation's, or a slot hold's, which lapse at its expiry (docs/reservations.md "Slot holds"). */
export type OccupancyOwner = { reservationId: string } | { holdId: string; expiresAt: Date };

function ownerColumns(owner: OccupancyOwner) {
  return 'reservationId' in owner ? { reservationId: owner.reservationId } : { holdId: owner.holdId, expiresAt: owner.expiresAt };
}

/**
 * Inserts the occupancy rows of a seating, tables in id order (two transactions taking
 * overlapping combinations then queue instead of deadlocking). False when a concurrent
 * reservation or live hold has one of the tables over that time: the exclusion constraint is the
 * arbiter of ON CONFLICT DO NOTHING, which, like the constraint's error, waits for a concurrent
 * writer of the same table to finish and counts it only if it committed. Unlike the error, it
 * leaves the transaction usable without a savepoint (two round trips fewer per booking): the rows
 * of a combination taken only in part are removed before the next attempt. Lapsed holds in the
 * way are deleted first by a trigger (migration `availability_holds_expiry`).
 */
export async function occupySeating(
  tx: Tx,
  owner: OccupancyOwner,
  venueId: string,
  seating: Seating,
  startsAt: Date,
  endsAt: Date,
): Promise<boolean> {
  const during = duringRange(startsAt, endsAt);
  const columns = ownerColumns(owner);
  const rows = [...seating.tableIds].sort().map((tableId) => ({ ...columns, tableId, venueId, during, live: true }));
  // The hot path of every booking: a prepared statement on the driver.
  const inserted = await insertRows(tx, reservationTables, rows, { onConflictDoNothing: true });
  if (inserted.length === rows.length) return true;
  if (inserted.length) {
    await tx
      .delete(reservationTables)
      .where(
        'reservationId' in owner ? eq(reservationTables.reservationId, owner.reservationId) : eq(reservationTables.holdId, owner.holdId),
      );
  }
  return false;
}

/**
 * Takes the first seating of the list still free in PostgreSQL: an automatic assignment that loses
 * a race moves on to the next table (docs/reservations.md). Null when every one was taken meanwhile. An
 * explicitly requested seating that is lost answers 409 no_availability, reason `conflict`.
 */
export async function occupyFirstFree(
  tx: Tx,
  owner: OccupancyOwner,
  venueId: string,
  seatings: readonly Seating[],
  startsAt: Date,
  endsAt: Date,
  explicit: boolean,
): Promise<Seating | null> {
  for (const seating of seatings) {
    if (await occupySeating(tx, owner, venueId, seating, startsAt, endsAt)) return seating;
    if (explicit) throw noAvailability('conflict', []);
  }
  return null;
}

/** The seating a request names by `field`; 400 naming the field when the active floor plan has no such table or combination. */
export function namedSeating(config: VenueConfig, field: 'tableId' | 'tableCombinationId', id: string): Seating {
  const seating = seatingOf(config, id);
  const kind = field === 'tableId' ? 'table' : 'combination';
  if (!seating || seating.kind !== kind) throw ApiError.invalid([field], `No ${kind} of the active floor plan has this id.`);
  return seating;
}

/** Frees (or takes back) a reservation's tables without forgetting which they were. */
export async function setOccupancyLive(tx: Tx, reservationId: string, live: boolean): Promise<void> {
  await tx
    .update(reservationTables)
    .set({ live })
    .where(and(eq(reservationTables.reservationId, reservationId), sql`${reservationTables.live} <> ${live}`));
}

export async function deleteOccupancy(tx: Tx, reservationId: string): Promise<void> {
  await tx.delete(reservationTables).where(eq(reservationTables.reservationId, reservationId));
}

/** The table and combination columns of a reservation seated at `seating` (or at nothing). */
export function seatingColumns(seating: Seating | null) {
  return {
    tableId: seating?.kind === 'table' ? seating.id : null,
    tableCombinationId: seating?.kind === 'combination' ? seating.id : null,
    tableAssigned: seating !== null,
  };
}

/** The tables of a seating as a response shows them, from the loaded configuration. */
export function seatedTablesOf(config: VenueConfig, seating: Seating | null): SeatedTable[] {
  if (!seating) return [];
  const ids = new Set(seating.tableIds);
  return config.tables
    .filter((t) => ids.has(t.id))
    .map((t) => ({ id: t.id, name: t.name, minSeats: t.minSeats, maxSeats: t.maxSeats }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id < b.id ? -1 : 1));
}

/** 409 no_availability with the reason and the alternatives of GET /availability (docs/api.md "Requests"). */
export function noAvailability(reason: UnavailableReason | 'conflict' | 'hold_expired', alternatives: Proposal[]): ApiError {
  return new ApiError('no_availability', `No availability: ${reason}.`, { reason, alternatives });
}
