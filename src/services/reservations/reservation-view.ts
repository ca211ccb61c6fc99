import { asc, eq, inArray, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { DbOrTx } from '../../db/client.js';
import { columnsOf, decodeJsonRow } from '../../db/json-rows.js';
import { floorTables, guests, reservations, reservationTables } from '../../db/schema/index.js';
import type { GuestRow } from '../guests/guest-json.js';
import { reservationJson, type ReservationParts, type ReservationRow, type SeatedTable } from './reservation-json.js';

/** The tables each reservation sits at, by name (deleted tables still resolve: they are soft-deleted). */
export async function loadSeatedTables(conn: DbOrTx, reservationIds: readonly string[]): Promise<Map<string, SeatedTable[]>> {
  const byReservation = new Map<string, SeatedTable[]>();
  if (!reservationIds.length) return byReservation;
  const rows = await conn
    .select({
      reservationId: reservationTables.reservationId,
      id: floorTables.id,
      name: floorTables.name,
      minSeats: floorTables.minSeats,
      maxSeats: floorTables.maxSeats,
    })
    .from(reservationTables)
    .innerJoin(floorTables, eq(floorTables.id, reservationTables.tableId))
    .where(inArray(reservationTables.reservationId, [...reservationIds]))
    .orderBy(asc(floorTables.name), asc(floorTables.id));
  for (const { reservationId: id, ...table } of rows) {
    // Filtered on reservation ids above: never a hold's row.
    const reservationId = id!;
    let list = byReservation.get(reservationId);
    if (!list) byReservation.set(reservationId, (list = []));
    list.push(table);
  }
  return byReservation;
}

/** Rows → everything their responses show, in two queries whatever the number of rows. */
export async function loadReservationParts(conn: DbOrTx, rows: readonly ReservationRow[]): Promise<ReservationParts[]> {
  const guestIds = [...new Set(rows.flatMap((r) => (r.guestId ? [r.guestId] : [])))];
  const [tables, guestRows] = await Promise.all([
    loadSeatedTables(
      conn,
      rows.map((r) => r.id),
    ),
    guestIds.length ? conn.select().from(guests).where(inArray(guests.id, guestIds)) : Promise.resolve([] as GuestRow[]),
  ]);
  const guestById = new Map(guestRows.map((g) => [g.id, g]));
  return rows.map((row) => ({ row, tables: tables.get(row.id) ?? [], guest: row.guestId ? (guestById.get(row.guestId) ?? null) : null }));
}

// The view's tables under short aliases: the one query that reads the view (worker-webhooks' context
// read, for every delivery) names each column by its table, and a traced process exports that text
// with every statement span.
export const reservationViewTable = alias(reservations, 'r');
const viewGuest = alias(guests, 'g');
const viewTableLink = alias(reservationTables, 'rt');
const viewTable = alias(floorTables, 'ft');

/** The tables of the selected reservation as loadSeatedTables gives them (same fields, same order), for one-query reads. */
const seatedTablesJson = sql<SeatedTable[]>`coalesce((
  select json_agg(
    json_build_object('id', ${viewTable.id}, 'name', ${viewTable.name}, 'minSeats', ${viewTable.minSeats}, 'maxSeats', ${viewTable.maxSeats})
    order by ${viewTable.name}, ${viewTable.id})
  from ${reservationTables} ${viewTableLink} join ${floorTables} ${viewTable} on ${viewTable.id} = ${viewTableLink.tableId}
  where ${viewTableLink.reservationId} = ${reservationViewTable.id}), '[]'::json)`;

/** A row of the view's reservation or guest, as `to_json` gives it. */
type JsonRow = Record<string, unknown>;

/**
 * The reservation view (the reservation in the v1 shape with its guest data, as webhooks carry it)
 * as columns of a query that joins `reservationViewTable` (reservations, aliased) and its guest with
 * `reservationViewGuestJoin`: worker-webhooks reads it with the delivery that describes the
 * reservation, in one round trip. The reservation and the guest come as one JSON value each
 * (decoded by their tables' columns in reservationViewOf): fifty-one columns named in the statement's
 * text, and mapped one by one, would be most of the read.
 */
export const reservationViewColumns = {
  reservation: sql<JsonRow | null>`to_json(${reservationViewTable})`,
  reservationGuest: sql<JsonRow | null>`to_json(${viewGuest})`,
  reservationTables: seatedTablesJson,
};
export const reservationViewGuestJoin = { table: viewGuest, on: eq(viewGuest.id, reservationViewTable.guestId) };

/** The view of what reservationViewColumns read; null when no reservation was found. */
export function reservationViewOf(read: {
  reservation: JsonRow | null;
  reservationGuest: JsonRow | null;
  reservationTables: SeatedTable[];
}): { reservation: ReturnType<typeof reservationJson> } | null {
  if (!read.reservation) return null;
  const row = decodeJsonRow<ReservationRow>(columnsOf(reservations), read.reservation);
  const guest = read.reservationGuest ? decodeJsonRow<GuestRow>(columnsOf(guests), read.reservationGuest) : null;
  return { reservation: reservationJson({ row, guest, tables: read.reservationTables }, 'full') };
}
