import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { closures } from '../../src/db/schema/index.js';
import { client, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();

const tomorrow = localDate(1);

/** What GET /availability answers at one time, in the shape of an explained slot. */
async function verdictAt(api: Client, venueId: string, serviceDate: string, time: string, partySize: number) {
  const res = await api.get(`/availability?venueId=${venueId}&serviceDate=${serviceDate}&time=${time}&partySize=${partySize}`);
  expect(res.status).toBe(200);
  const { venueId: _v, serviceDate: _d, partySize: _p, timezone: _z, alternatives: _a, livemode: _l, ...verdict } = res.body;
  return verdict;
}

describe('GET /availability/slots?include=unavailable (docs/reservations.md "Explained availability")', () => {
  it('lists every grid time of the day, each with the reason GET /availability gives at that time', async () => {
    const t = await createTenant();
    const fixture = await configureVenue(t.venueId, {
      // The first shift gets the pacing rule; lunch is closed tomorrow.
      shifts: [
        { name: 'Dinner', startTime: '18:00', lastSeatingTime: '22:00', endTime: '23:30' },
        { name: 'Lunch', startTime: '12:00', lastSeatingTime: '14:00', endTime: '15:00' },
      ],
      pacing: [{ maxCovers: 6, windowMinutes: 30 }],
      tables: [
        { name: 'T2', minSeats: 1, maxSeats: 2 },
        { name: 'T2b', minSeats: 1, maxSeats: 2 },
        { name: 'T4', minSeats: 2, maxSeats: 4 },
        { name: 'T6', minSeats: 4, maxSeats: 6, isBlocked: true },
      ],
    });
    await db()
      .insert(closures)
      .values({ venueId: t.venueId, from: tomorrow, to: tomorrow, shiftIds: [fixture.shiftIds[1]] });
    const api = client(server.url, t.key);
    // 19:00: T2 and T4 taken until 20:30 and the 19:00–19:30 pacing block full (6 covers).
    for (const [partySize, tableId] of [
      [4, fixture.tableIds.T4],
      [2, fixture.tableIds.T2],
    ] as const) {
      const booked = await api.post('/reservations', { venueId: t.venueId, serviceDate: tomorrow, time: '19:00', partySize, tableId });
      expect(booked.status, booked.text).toBe(201);
    }

    const seen = new Set<string>();
    for (const [serviceDate, partySize] of [
      [tomorrow, 2],
      [tomorrow, 3],
      [tomorrow, 5],
      [tomorrow, 20],
      [localDate(-1), 2],
    ] as const) {
      const res = await api.get(
        `/availability/slots?venueId=${t.venueId}&serviceDate=${serviceDate}&partySize=${partySize}&include=unavailable`,
      );
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ venueId: t.venueId, serviceDate, partySize, timezone: 'Europe/Rome', nextCursor: null });
      const times = res.body.data.map((s: { time: string }) => s.time);
      // Lunch 12:00–14:45 (closed, on to its end), dinner 18:00–23:15 (past last seating to its end), every 15 minutes.
      const grid = (from: number, to: number) =>
        Array.from({ length: (to - from) / 15 + 1 }, (_, i) => from + i * 15).map(
          (m) => `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`,
        );
      expect(times).toEqual([...grid(12 * 60, 14 * 60 + 45), ...grid(18 * 60, 23 * 60 + 15)]);
      for (const slot of res.body.data) {
        // The explained answer also names where the turn time comes from.
        const { turnTimeSource, ...verdict } = slot;
        expect(turnTimeSource).toBe(slot.available ? 'configured' : undefined);
        expect(verdict, `${serviceDate} ${slot.time} party ${partySize}`).toEqual(
          await verdictAt(api, t.venueId, serviceDate, slot.time, partySize),
        );
        seen.add(slot.reason);
      }
      // The available ones are exactly GET /availability/slots without include.
      const plain = await api.get(`/availability/slots?venueId=${t.venueId}&serviceDate=${serviceDate}&partySize=${partySize}`);
      const available = res.body.data
        .filter((s: { available: boolean }) => s.available)
        .map(({ available: _a, reason: _r, turnTimeSource: _t, ...p }: Record<string, unknown>) => p);
      expect(available).toEqual(plain.body.data);
    }
    expect([...seen].sort()).toEqual([
      'after_last_seating',
      'available',
      'closed',
      'no_shift',
      'no_table',
      'no_turn_time_rule',
      'pacing_full',
    ]);
  });

  it('a whole closed day lists its shifts closed; include takes only "unavailable"', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId, { closures: [{ from: tomorrow, to: tomorrow }] });
    const api = client(server.url, t.key);
    const res = await api.get(`/availability/slots?venueId=${t.venueId}&serviceDate=${tomorrow}&partySize=2&include=unavailable`);
    expect(res.body.data).toHaveLength(22);
    expect(res.body.data.every((s: { available: boolean; reason: string }) => !s.available && s.reason === 'closed')).toBe(true);
    const bad = await api.get(`/availability/slots?venueId=${t.venueId}&serviceDate=${tomorrow}&partySize=2&include=all`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.fields).toEqual(['include']);
  });
});
