import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { reservations } from '../../src/db/schema/index.js';
import { localToInstant } from '../../src/lib/local-time.js';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();

const zone = 'Europe/Rome';
const at = (date: string, hhmm: string) => new Date(localToInstant(zone, date, Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3))));

const statuses = { created: 0, confirmed: 0, arrived: 0, seated: 0, released: 0, completed: 0, no_show: 0, cancelled: 0 };
const sources = { phone: 0, voice_agent: 0, floor: 0, waitlist: 0, walk_in: 0, api: 0, import: 0 };

describe('GET /reports/summary', () => {
  it('computes covers, statuses, sources, rates and averages per day and in total', async () => {
    const t = await createTenant();
    const d1 = localDate(-2);
    const d2 = localDate(-1);
    const d3 = localDate(0);
    const row = (
      serviceDate: string,
      partySize: number,
      status: (typeof reservations.$inferInsert)['status'],
      source: (typeof reservations.$inferInsert)['source'],
      extra = {},
    ) => ({
      organisationId: t.organisationId,
      venueId: t.venueId,
      serviceDate,
      time: '19:00',
      startsAt: at(serviceDate, '19:00'),
      endsAt: at(serviceDate, '20:30'),
      partySize,
      status,
      source,
      ...extra,
    });
    await db()
      .insert(reservations)
      .values([
        row(d1, 2, 'completed', 'api', { seatedAt: at(d1, '19:00'), freedAt: at(d1, '20:30'), completedAt: at(d1, '20:45') }),
        row(d1, 4, 'completed', 'phone', { seatedAt: at(d1, '19:05'), completedAt: at(d1, '21:05') }),
        row(d1, 3, 'no_show', 'api'),
        row(d1, 5, 'cancelled', 'import'),
        row(d2, 6, 'seated', 'walk_in', { seatedAt: at(d2, '19:00') }),
        row(d2, 2, 'confirmed', 'waitlist'),
      ]);
    // Another venue's reservations never count.
    const other = await createTenant();
    await db()
      .insert(reservations)
      .values({ ...row(d1, 8, 'completed', 'api'), organisationId: other.organisationId, venueId: other.venueId });

    const res = await client(server.url, t.key).get(`/reports/summary?venueId=${t.venueId}&from=${d1}&to=${d3}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      venueId: t.venueId,
      from: d1,
      to: d3,
      days: [
        {
          serviceDate: d1,
          covers: 6,
          reservations: 4,
          byStatus: { ...statuses, completed: 2, no_show: 1, cancelled: 1 },
          bySource: { ...sources, api: 2, phone: 1, import: 1 },
          noShowRate: 0.3333,
          averagePartySize: 3,
          averageSeatedMinutes: 105,
        },
        {
          serviceDate: d2,
          covers: 8,
          reservations: 2,
          byStatus: { ...statuses, seated: 1, confirmed: 1 },
          bySource: { ...sources, walk_in: 1, waitlist: 1 },
          noShowRate: 0,
          averagePartySize: 4,
          averageSeatedMinutes: null,
        },
        {
          serviceDate: d3,
          covers: 0,
          reservations: 0,
          byStatus: statuses,
          bySource: sources,
          noShowRate: null,
          averagePartySize: null,
          averageSeatedMinutes: null,
        },
      ],
      totals: {
        covers: 14,
        reservations: 6,
        byStatus: { ...statuses, completed: 2, no_show: 1, cancelled: 1, seated: 1, confirmed: 1 },
        bySource: { ...sources, api: 2, phone: 1, import: 1, walk_in: 1, waitlist: 1 },
        noShowRate: 0.2,
        averagePartySize: 3.5,
        averageSeatedMinutes: 105,
      },
      livemode: true,
    });
  });

  it('validates the range (at most 366 days, to not before from), needs reservations:read and a visible venue', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    const year = await api.get(`/reports/summary?venueId=${t.venueId}&from=2026-01-01&to=2026-12-31`);
    expect(year.status).toBe(200);
    expect(year.body.days).toHaveLength(365);
    expect(year.body.totals.reservations).toBe(0);
    for (const [from, to] of [
      ['2026-01-01', '2027-01-02'],
      ['2026-02-02', '2026-02-01'],
    ]) {
      const res = await api.get(`/reports/summary?venueId=${t.venueId}&from=${from}&to=${to}`);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields).toEqual(['to']);
    }
    expect((await api.get(`/reports/summary?venueId=${t.venueId}&from=2026-01-01`)).body.error.details.fields).toEqual(['to']);
    const noScope = client(server.url, await createKey(t.organisationId, { scopes: ['guests:read'] }));
    expect(
      (await noScope.get(`/reports/summary?venueId=${t.venueId}&from=2026-01-01&to=2026-01-02`)).body.error.details.requiredScope,
    ).toBe('reservations:read');
    const stranger = client(server.url, (await createTenant()).key);
    expect((await stranger.get(`/reports/summary?venueId=${t.venueId}&from=2026-01-01&to=2026-01-02`)).status).toBe(404);
  });
});

describe('GET /reports/occupancy', () => {
  it('shows covers, arrivals and tables in use slot by slot through the open shift', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(server.url, t.key);
    const day = localDate(1);
    for (const [time, partySize] of [
      ['19:00', 2],
      ['19:00', 4],
      ['20:00', 5],
    ] as const) {
      expect((await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time, partySize })).status).toBe(201);
    }
    const cancelled = (await api.post('/reservations', { venueId: t.venueId, serviceDate: day, time: '21:00', partySize: 2 })).body
      .reservation;
    await api.delete(`/reservations/${cancelled.id}`);

    const res = await api.get(`/reports/occupancy?venueId=${t.venueId}&serviceDate=${day}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ venueId: t.venueId, serviceDate: day, timezone: zone, slotIntervalMinutes: 15, seats: 12, tables: 3 });
    // Dinner 18:00–23:30 in 15-minute slots.
    expect(res.body.data).toHaveLength(22);
    const slot = (time: string) => res.body.data.find((s: any) => s.time === time);
    expect(slot('18:00')).toEqual({
      time: '18:00',
      startsAt: at(day, '18:00').toISOString(),
      reservations: 0,
      covers: 0,
      arrivals: 0,
      arrivingCovers: 0,
      tablesInUse: 0,
      occupancyRate: 0,
    });
    expect(slot('19:00')).toMatchObject({ reservations: 2, covers: 6, arrivals: 2, arrivingCovers: 6, tablesInUse: 2, occupancyRate: 0.5 });
    expect(slot('20:00')).toMatchObject({
      reservations: 3,
      covers: 11,
      arrivals: 1,
      arrivingCovers: 5,
      tablesInUse: 3,
      occupancyRate: 0.9167,
    });
    expect(slot('20:30')).toMatchObject({ reservations: 1, covers: 5, arrivals: 0, tablesInUse: 1 });
    expect(slot('21:00')).toMatchObject({ reservations: 1, covers: 5, arrivals: 0 });
    expect(slot('22:00')).toMatchObject({ reservations: 0, covers: 0 });

    const unknownParameter = await api.get(`/reports/occupancy?venueId=${t.venueId}&serviceDate=${day}&extra=1`);
    expect(unknownParameter.body.error.details.fields).toEqual(['extra']);
  });
});
