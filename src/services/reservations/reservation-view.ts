import { asc, eq, inArray } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { floorTables, guests, reservations, reservationTables } from '../../db/schema/index.js';
import type { GuestRow } from '../guests/guest-json.js';
import { reservationJson, type ReservationParts, type ReservationRow, type SeatedTable } from './reservation-json.js';

/** The tables each reservation sits at, by name (deleted tables still resolve: they are soft-deleted). */
export async function loadSeatedTables(conn: DbOrTx, reservationIds: readonly string[]): Promise<Map<string, SeatedTable[]>> {
  const byReservation = new Map<string, SeatedTable[]>();
  if (!reservationIds.length) return byReservation;
  const rows = await conn
    .select({ reservationId: reservationTables.reservationId, id: floorTables.id, name: floorTables.name, minSeats: floorTables.minSeats, maxSeats: floorTables.maxSeats })
    .from(reservationTables)
    .innerJoin(floorTables, eq(floorTables.id, reservationTables.tableId))
    .where(inArray(reservationTables.reservationId, [...reservationIds]))
    .orderBy(asc(floorTables.name), asc(floorTables.id));
  for (const { reservationId, ...table } of rows) {
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

export async function loadReservationPartsById(conn: DbOrTx, id: string): Promise<ReservationParts | null> {
  const [row] = await conn.select().from(reservations).where(eq(reservations.id, id));
  if (!row) return null;
  const [parts] = await loadReservationParts(conn, [row]);
  return parts;
}

/** The reservation in the v1 shape with its guest data, as webhooks carry it; null when it no longer exists. */
export async function getReservationView(id: string): Promise<{ reservation: ReturnType<typeof reservationJson> } | null> {
  const parts = await loadReservationPartsById(db, id);
  return parts ? { reservation: reservationJson(parts, 'full') } : null;
}
