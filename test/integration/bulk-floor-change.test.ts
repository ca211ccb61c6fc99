import { randomUUID } from 'node:crypto';
import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue } from '../support/venue-fixtures.js';

/**
 * Bulk changes are written in bounded statements: activating a floor plan that unseats 20,000
 * reservations once answered 500 (drizzle overflowed its stack building one INSERT of all their
 * events, which PostgreSQL's 65,535-parameter limit would have refused anyway).
 */
describe('a floor plan switch that unseats 20,000 reservations', () => {
  const server = useTestServer();

  it(
    'answers 200 and leaves every reservation needing attention, each with its event, in one transaction',
    { timeout: 180_000 },
    async () => {
      const t = await createTenant();
      const fixture = await configureVenue(t.venueId, {
        tables: Array.from({ length: 50 }, (_, i) => ({ name: `T${i}`, minSeats: 1, maxSeats: 4 })),
      });
      const api = client(server.url, t.key);
      const areaId = randomUUID();
      const next = await api.post(`/venues/${t.venueId}/floor-plans`, {
        name: 'Winter',
        areas: [{ id: areaId, name: 'Hall', position: 0, widthCm: 1000, heightCm: 800 }],
        tables: [{ id: randomUUID(), areaId, name: 'W1', minSeats: 1, maxSeats: 4 }],
        combinations: [],
      });
      expect(next.status).toBe(201);

      // 50 tables × 400 evenings, seated on the active plan, written by SQL to keep the test short.
      await db().execute(sql`
      with made as (
        insert into reservations (organisation_id, venue_id, service_date, time, starts_at, ends_at, party_size, status, source, table_id, table_assigned)
        select ${t.organisationId}, ${t.venueId}, d::date, '19:00', (d::date + time '19:00') at time zone 'Europe/Rome',
          (d::date + time '20:30') at time zone 'Europe/Rome', 2, 'confirmed', 'api', tbl.id, true
        from generate_series(current_date + 1, current_date + 400, interval '1 day') d
        cross join (select id from floor_tables where floor_plan_id = ${fixture.planId}) tbl
        returning id, table_id, starts_at, ends_at
      )
      insert into reservation_tables (reservation_id, table_id, venue_id, during, live)
      select id, table_id, ${t.venueId}, tstzrange(starts_at, ends_at), true from made`);
      const [{ seated }] = (await db().execute(
        sql`select count(*)::int as seated from reservations where venue_id = ${t.venueId} and table_assigned`,
      )) as unknown as { seated: number }[];
      expect(seated).toBe(20_000);

      const res = await api.post(`/venues/${t.venueId}/floor-plans/${next.body.floorPlan.id}/activate`);
      expect(res.status).toBe(200);
      const [after] = (await db().execute(sql`
      select
        (select count(*)::int from reservations where venue_id = ${t.venueId} and not table_assigned and needs_attention) as unseated,
        (select count(*)::int from reservation_tables where venue_id = ${t.venueId}) as occupancy,
        (select count(*)::int from events where venue_id = ${t.venueId} and type = 'reservation_needs_attention') as events`)) as unknown as {
        unseated: number;
        occupancy: number;
        events: number;
      }[];
      expect(after).toEqual({ unseated: 20_000, occupancy: 0, events: 20_000 });
    },
  );
});
