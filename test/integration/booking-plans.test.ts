import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, databaseOptionsOf, useDatabase } from '../../src/db/client.js';
import { configureDemoVenue } from '../../src/services/venue-config/demo-venue.js';
import { useFileSettings, useOwnQueuePrefix } from '../support/file-settings.js';
import { createOwnDatabase } from '../support/own-database.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { localDate } from '../support/venue-fixtures.js';

/**
 * How PostgreSQL plans a booking's prepared statements. Left to itself, after five custom plans it
 * keeps planning a statement anew at each execution when its estimates for the given values look
 * cheaper than the generic plan's, as they do for a future day on a long history: the venue day's read
 * then cost a booking 0.4 ms of planning at two years (docs/benchmarks.md "The venue day planned at
 * every booking"). A booking's transaction plans them once: here the driver's one connection is asked
 * how each was planned.
 */
useOwnQueuePrefix('bp');
const own = await createOwnDatabase('bp');
const config = useFileSettings({ DATABASE_URL: own.url });
// One connection: the bookings' statements and the look at how they were planned share its session.
const database = createDatabase({ ...databaseOptionsOf(config), poolSize: 1 });
useDatabase(database);
const server = useTestServer();

let venueId: string;
let api: ReturnType<typeof client>;

beforeAll(async () => {
  const tenant = await createTenant();
  await configureDemoVenue(tenant.organisationId, tenant.venueId);
  venueId = tenant.venueId;
  api = client(server.url, tenant.key);
});

afterAll(async () => {
  await database.sql.end();
  await own.drop();
});

describe("a booking's statements", () => {
  it("read the venue day by its generic plan from the first booking on (no custom plan), however PostgreSQL's estimates for the day's values compare", async () => {
    for (let i = 0; i < 7; i++) {
      const res = await api.post('/reservations', { venueId, serviceDate: localDate(3 + i), time: '19:00', partySize: 2 });
      expect(res.status, res.text).toBe(201);
    }
    const plans = await database.sql<Array<{ generic_plans: number; custom_plans: number }>>`
      select generic_plans::int, custom_plans::int from pg_prepared_statements where statement like '%from reservation_versions where venue_id%'`;
    expect(plans.length).toBeGreaterThan(0);
    expect(plans.reduce((sum, p) => sum + p.generic_plans, 0)).toBeGreaterThanOrEqual(7);
    expect(plans.map((p) => p.custom_plans)).toEqual(plans.map(() => 0));
  });
});
