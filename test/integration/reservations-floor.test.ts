import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, floorTables } from '../../src/db/schema/index.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { backendPid, untilBlockedBy } from '../support/lock-waits.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);

async function setup() {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId, {
    tables: [
      { name: 'A', minSeats: 1, maxSeats: 4 },
      { name: 'B', minSeats: 1, maxSeats: 4 },
    ],
  });
  const api = client(server.url, t.key);
  const booked = (await api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 })).body
    .reservation;
  expect(booked.table.tableId).toBe(fixture.tableIds.A);
  return { ...t, fixture, api, booked };
}

async function needsAttentionEvents(reservationId: string) {
  return db()
    .select()
    .from(events)
    .where(and(eq(events.subjectId, reservationId), eq(events.type, 'reservation_needs_attention')));
}

describe('a booking and a floor change at the same time', () => {
  it('the booking reads the floor once the change is committed, never before', async () => {
    const t = await createTenant();
    const fixture = await configureVenue(t.venueId, { tables: [{ name: 'Only', minSeats: 1, maxSeats: 4 }] });
    const api = client(server.url, t.key);
    let pending!: Promise<{ status: number; body: any }>;
    await db().transaction(async (tx) => {
      // What the floor services do: the venue row locked, then the table blocked.
      await tx.execute(sql`select id from venues where id = ${t.venueId} for no key update`);
      await tx.update(floorTables).set({ isBlocked: true, updatedAt: new Date() }).where(eq(floorTables.id, fixture.tableIds.Only));
      pending = api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 });
      await untilBlockedBy(await backendPid(tx)); // the booking waits for the change to commit
    });
    const res = await pending;
    expect(res.status).toBe(409);
    expect(res.body.error.details.reason).toBe('no_table');
  });
});

describe('floor changes that leave a future reservation without a valid table (docs/venue-configuration.md)', () => {
  it('blocking its table: the reservation keeps its time, loses the table, needs attention and emits the event', async () => {
    const { api, venueId, fixture, booked } = await setup();
    const blocked = await api.patch(`/venues/${venueId}/tables/${fixture.tableIds.A}`, { isBlocked: true });
    expect(blocked.status).toBe(200);
    const after = (await api.get(`/reservations/${booked.id}`)).body.reservation;
    expect(after).toMatchObject({ startsAt: booked.startsAt, time: '19:00', tableAssigned: false, needsAttention: true, table: null });
    const [event] = await needsAttentionEvents(booked.id);
    expect(event).toMatchObject({ venueId, subjectType: 'reservation' });
    expect((event.data as { reservation: { needsAttention: boolean } }).reservation.needsAttention).toBe(true);
    // The table is free for nobody, the other one still books; the released reservation can be seated again.
    const next = await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 });
    expect(next.body.reservation.table.tableId).toBe(fixture.tableIds.B);
    const reseated = await api.patch(`/reservations/${booked.id}`, { time: '21:00' });
    expect(reseated.body.reservation).toMatchObject({ tableAssigned: true, needsAttention: false, table: { tableId: fixture.tableIds.B } });
  });

  it('unblocking or blocking another table leaves it alone', async () => {
    const { api, venueId, fixture, booked } = await setup();
    await api.patch(`/venues/${venueId}/tables/${fixture.tableIds.B}`, { isBlocked: true });
    await api.patch(`/venues/${venueId}/tables/${fixture.tableIds.B}`, { isBlocked: false });
    expect((await api.get(`/reservations/${booked.id}`)).body.reservation).toMatchObject({ tableAssigned: true, needsAttention: false });
    expect(await needsAttentionEvents(booked.id)).toHaveLength(0);
  });

  it('replacing the plan without its table, or activating another plan', async () => {
    const { api, venueId, fixture, booked } = await setup();
    const plan = (await api.get(`/venues/${venueId}/floor-plans/${fixture.planId}`)).body.floorPlan;
    const withoutA = {
      areas: plan.areas,
      tables: plan.tables.filter((t: { id: string }) => t.id !== fixture.tableIds.A),
      combinations: [],
    };
    const replaced = await api.put(`/venues/${venueId}/floor-plans/${fixture.planId}`, withoutA);
    expect(replaced.status).toBe(200);
    expect((await api.get(`/reservations/${booked.id}`)).body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true });

    const onB = (await api.post('/reservations', { venueId, serviceDate: tomorrow, time: '20:00', partySize: 2 })).body.reservation;
    expect(onB.table.tableId).toBe(fixture.tableIds.B);
    const other = await api.post(`/venues/${venueId}/floor-plans`, {
      name: 'Terrace',
      areas: [{ id: 'c0a80101-0000-4000-8000-000000000001', name: 'Terrace', widthCm: 500, heightCm: 500 }],
      tables: [{ areaId: 'c0a80101-0000-4000-8000-000000000001', name: 'Z', minSeats: 1, maxSeats: 4 }],
      combinations: [],
    });
    expect(other.status).toBe(201);
    expect((await api.post(`/venues/${venueId}/floor-plans/${other.body.floorPlan.id}/activate`)).status).toBe(200);
    expect((await api.get(`/reservations/${onB.id}`)).body.reservation).toMatchObject({ tableAssigned: false, needsAttention: true });
    expect(await needsAttentionEvents(onB.id)).toHaveLength(1);
  });
});
