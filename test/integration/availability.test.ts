import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { floorTables, reservationTables, reservations } from '../../src/db/schema/index.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);

describe('GET /availability', () => {
  it('offers a proposal with the chosen table size, no alternatives and a null reason', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const res = await client(server.url, t.key).get(`/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=3`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      venueId: t.venueId,
      serviceDate: tomorrow,
      partySize: 3,
      timezone: 'Europe/Rome',
      available: true,
      time: '19:00',
      turnTimeMinutes: 90,
      seats: 4,
      overflowsShift: false,
      reason: 'available',
      alternatives: [],
      livemode: true,
    });
    expect(new Date(res.body.endsAt).getTime() - new Date(res.body.startsAt).getTime()).toBe(90 * 60_000);
  });

  it.each([
    ['closed', { closures: [{ from: tomorrow, to: tomorrow }] }, '19:00', 2],
    ['no_shift', {}, '16:00', 2],
    ['after_last_seating', {}, '22:30', 2],
    ['no_turn_time_rule', {}, '19:00', 20],
    ['no_table', {}, '19:00', 9],
  ])('answers 200 available false with reason %s', async (reason, options, time, partySize) => {
    const t = await createTenant();
    await configureVenue(t.venueId, options);
    const res = await client(server.url, t.key).get(
      `/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=${time}&partySize=${partySize}`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ available: false, reason });
    expect(Array.isArray(res.body.alternatives)).toBe(true);
  });

  it('answers no_shift for a past date and beyond the horizon', async () => {
    const t = await createTenant({ venue: { bookingHorizonDays: 10 } });
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    for (const date of [localDate(-1), localDate(11)]) {
      const res = await api.get(`/availability?venueId=${t.venueId}&serviceDate=${date}&time=19:00&partySize=2`);
      expect(res.body).toMatchObject({ available: false, reason: 'no_shift', alternatives: [] });
    }
  });

  it('offers alternatives when the time is full', async () => {
    const t = await createTenant();
    const f = await configureVenue(t.venueId, { tables: [{ name: 'Solo', minSeats: 1, maxSeats: 4 }] });
    const api = client(server.url, t.key);
    const booked = await api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 });
    expect(booked.status).toBe(201);
    expect(booked.body.reservation.table.tableId).toBe(f.tableIds.Solo);
    const res = await api.get(`/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=19:30&partySize=2`);
    expect(res.body).toMatchObject({ available: false, reason: 'no_table' });
    // Free again from 20:30 (90 minutes turn); 18:00 would end at 19:30, overlapping too.
    expect(res.body.alternatives.map((p: { time: string }) => p.time)).toEqual(['20:30', '20:45', '21:00', '21:15', '21:30']);
    expect(res.body.alternatives[0]).toEqual({
      time: '20:30',
      startsAt: expect.any(String),
      endsAt: expect.any(String),
      turnTimeMinutes: 90,
      seats: 4,
      overflowsShift: false,
    });
  });

  it('validates every parameter', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    const res = await api.get(`/availability?venueId=nope&serviceDate=2026-13-01&time=25:00&partySize=0`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields.sort()).toEqual(['partySize', 'serviceDate', 'time', 'venueId']);
    const missing = await api.get(`/availability?venueId=${t.venueId}`);
    expect(missing.status).toBe(400);
    expect(missing.body.error.details.fields.sort()).toEqual(['partySize', 'serviceDate', 'time']);
    expect((await api.get(`/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=501`)).status).toBe(400);
  });

  it('hides venues of other organisations and needs reservations:read', async () => {
    const a = await createTenant();
    const b = await createTenant();
    const other = await client(server.url, b.key).get(`/availability?venueId=${a.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=2`);
    expect(other.status).toBe(404);
    const noScope = await createKey(a.organisationId, { scopes: ['venues:read'] });
    const res = await client(server.url, noScope).get(`/availability?venueId=${a.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=2`);
    expect(res.status).toBe(403);
    expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'reservations:read' } });
  });
});

describe('freshness of what each process keeps in memory', () => {
  it('sees every committed change at once, whoever wrote it', async () => {
    const t = await createTenant();
    const f = await configureVenue(t.venueId, { tables: [{ name: 'Solo', minSeats: 1, maxSeats: 4 }] });
    const api = client(server.url, t.key);
    const path = `/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=2`;
    expect((await api.get(path)).body.available).toBe(true);
    const booked = await api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize: 2 });
    expect((await api.get(path)).body).toMatchObject({ available: false, reason: 'no_table' });
    // Written behind the API's back (another process, an import): the version trigger still tells.
    await db().transaction(async (tx) => {
      await tx.update(reservations).set({ status: 'cancelled' }).where(eq(reservations.id, booked.body.reservation.id));
      await tx.update(reservationTables).set({ live: false }).where(eq(reservationTables.reservationId, booked.body.reservation.id));
    });
    expect((await api.get(path)).body.available).toBe(true);
    // A configuration change written directly is seen too.
    await db().update(floorTables).set({ isBlocked: true, updatedAt: new Date() }).where(eq(floorTables.id, f.tableIds.Solo));
    expect((await api.get(path)).body).toMatchObject({ available: false, reason: 'no_table' });
  });
});

describe('GET /availability/slots and /availability/days', () => {
  it('lists every available grid time of a day', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const res = await client(server.url, t.key).get(`/availability/slots?venueId=${t.venueId}&serviceDate=${tomorrow}&partySize=2`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ venueId: t.venueId, serviceDate: tomorrow, partySize: 2, timezone: 'Europe/Rome', nextCursor: null });
    // 18:00 … 22:00 every 15 minutes.
    expect(res.body.data).toHaveLength(17);
    expect(res.body.data[0]).toMatchObject({ time: '18:00', seats: 2, turnTimeMinutes: 90 });
  });

  it('counts slots per day over a range, closed days included', async () => {
    const t = await createTenant();
    const closed = localDate(3);
    await configureVenue(t.venueId, { closures: [{ from: closed, to: closed }] });
    const res = await client(server.url, t.key).get(
      `/availability/days?venueId=${t.venueId}&from=${localDate(1)}&to=${localDate(5)}&partySize=2`,
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      venueId: t.venueId,
      from: localDate(1),
      to: localDate(5),
      partySize: 2,
      timezone: 'Europe/Rome',
      nextCursor: null,
    });
    expect(res.body.data).toEqual(
      [1, 2, 3, 4, 5].map((d) => ({ serviceDate: localDate(d), available: d !== 3, slotCount: d === 3 ? 0 : 17 })),
    );
  });

  it('accepts 62 days and refuses 63 naming `to`', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const ok = await api.get(`/availability/days?venueId=${t.venueId}&from=${localDate(0)}&to=${localDate(61)}&partySize=2`);
    expect(ok.status).toBe(200);
    expect(ok.body.data).toHaveLength(62);
    const tooLong = await api.get(`/availability/days?venueId=${t.venueId}&from=${localDate(0)}&to=${localDate(62)}&partySize=2`);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.details.fields).toEqual(['to']);
    const reversed = await api.get(`/availability/days?venueId=${t.venueId}&from=${localDate(2)}&to=${localDate(1)}&partySize=2`);
    expect(reversed.body.error.details.fields).toEqual(['to']);
  });
});

describe('publishable keys', () => {
  it('may check availability from an allowed origin only', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const widget = await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] });
    const path = `/availability?venueId=${t.venueId}&serviceDate=${tomorrow}&time=19:00&partySize=2`;
    const ok = await client(server.url, widget).get(path, { origin: 'https://shop.example' });
    expect(ok.status).toBe(200);
    expect(ok.body.available).toBe(true);
    const days = await client(server.url, widget).get(
      `/availability/days?venueId=${t.venueId}&from=${tomorrow}&to=${tomorrow}&partySize=2`,
      {
        origin: 'https://shop.example',
      },
    );
    expect(days.status).toBe(200);
    const elsewhere = await client(server.url, widget).get(path, { origin: 'https://evil.example' });
    expect(elsewhere.status).toBe(403);
    expect(elsewhere.body.error.details.reason).toBe('origin_not_allowed');
  });
});
