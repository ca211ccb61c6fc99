import { asc, eq, inArray, sql } from 'drizzle-orm';
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

/** The tables of the selected reservation as loadSeatedTables gives them (same fields, same order), for one-query reads. */
const seatedTablesJson = sql<SeatedTable[]>`coalesce((
  select json_agg(
    json_build_object('id', ${floorTables.id}, 'name', ${floorTables.name}, 'minSeats', ${floorTables.minSeats}, 'maxSeats', ${floorTables.maxSeats})
    order by ${floorTables.name}, ${floorTables.id})
  from ${reservationTables} join ${floorTables} on ${floorTables.id} = ${reservationTables.tableId}
  where ${reservationTables.reservationId} = ${reservations.id}), '[]'::json)`;

// Prepared once: worker-webhooks reads it for the first attempt of every reservation webhook.
const reservationViewStatement = db
  .select({ row: reservations, guest: guests, tables: seatedTablesJson })
  .from(reservations)
  .leftJoin(guests, eq(guests.id, reservations.guestId))
  .where(eq(reservations.id, sql.placeholder('id')))
  .prepare('read_reservation_view');

/** The reservation in the v1 shape with its guest data, as webhooks carry it, in one query; null when it no longer exists. */
export async function getReservationView(id: string): Promise<{ reservation: ReturnType<typeof reservationJson> } | null> {
  const [parts] = await reservationViewStatement.execute({ id });
  return parts ? { reservation: reservationJson(parts, 'full') } : null;
}
