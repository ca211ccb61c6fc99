import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { columnsOf, decodeJsonRow } from '../../src/db/json-rows.js';
import { guests, organisations, reservations } from '../../src/db/schema/index.js';
import { reservationJson } from '../../src/services/reservations/reservation-json.js';
import {
  loadReservationParts,
  reservationViewColumns,
  reservationViewGuestJoin,
  reservationViewOf,
  reservationViewTable,
} from '../../src/services/reservations/reservation-view.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

/**
 * The reservation view that worker-webhooks reads with a delivery's context (the reservation and its
 * guest as one JSON value each, decoded by their tables' columns) must be the view GET
 * /reservations/{id} shows from drizzle's own rows: every kind of column (instants to the
 * millisecond, a date, a time, arrays, jsonb, text with quotes and accents, nulls).
 */
const server = useTestServer();

async function readAsJson(id: string) {
  const [row] = await db()
    .select(reservationViewColumns)
    .from(reservationViewTable)
    .leftJoin(reservationViewGuestJoin.table, reservationViewGuestJoin.on)
    .where(eq(reservationViewTable.id, id));
  return row;
}

async function viewOfDrizzleRows(id: string) {
  const rows = await db().select().from(reservations).where(eq(reservations.id, id));
  const [parts] = await loadReservationParts(db(), rows);
  return { reservation: reservationJson(parts, 'full') };
}

describe('the reservation view read as JSON values', () => {
  it('is the view of drizzle’s rows, for a seated reservation at a table with a guest of every kind of column', async () => {
    const tenant = await createTenant();
    await configureVenue(tenant.venueId);
    const booked = await client(server.url, tenant.key).post('/reservations', {
      venueId: tenant.venueId,
      serviceDate: localDate(1),
      time: '19:30',
      partySize: 2,
      notes: 'window, "quoted" — ü',
      guest: {
        phone: '347 765 4321',
        firstName: 'Ada',
        lastName: 'Lovelace',
        allergies: 'shellfish',
        allergens: ['crustaceans', 'gluten'],
      },
    });
    expect(booked.status).toBe(201);
    const { id, guestId } = booked.body.reservation;
    await db()
      .update(reservations)
      .set({ status: 'seated', arrivedAt: new Date('2026-11-29T18:31:02.123Z'), seatedAt: new Date('2026-11-29T18:35:00.456Z') })
      .where(eq(reservations.id, id));
    await db()
      .update(guests)
      .set({
        consents: { marketingEmail: true, marketingSms: false },
        campaignTags: ['spring'],
        lastVisitAt: new Date('2026-10-01T20:00:00.789Z'),
      })
      .where(eq(guests.id, guestId));

    const read = await readAsJson(id);
    // Each row decoded as drizzle reads it, every column.
    expect(decodeJsonRow(columnsOf(reservations), read.reservation!)).toEqual(
      (await db().select().from(reservations).where(eq(reservations.id, id)))[0],
    );
    expect(decodeJsonRow(columnsOf(guests), read.reservationGuest!)).toEqual(
      (await db().select().from(guests).where(eq(guests.id, guestId)))[0],
    );
    const view = reservationViewOf(read);
    expect(view).toEqual(await viewOfDrizzleRows(id));
    expect(view?.reservation).toMatchObject({ id, status: 'seated', notes: 'window, "quoted" — ü' });
    expect(view?.reservation.table?.tables.length).toBeGreaterThan(0);
  });

  it('is null when the left join finds no reservation: to_json of a row the join did not find is null', async () => {
    const tenant = await createTenant();
    const [row] = await db()
      .select(reservationViewColumns)
      .from(organisations)
      .leftJoin(reservationViewTable, sql`false`)
      .leftJoin(reservationViewGuestJoin.table, reservationViewGuestJoin.on)
      .where(eq(organisations.id, tenant.organisationId));
    expect(row).toEqual({ reservation: null, reservationGuest: null, reservationTables: [] });
    expect(reservationViewOf(row)).toBeNull();
  });
});
