import { and, asc, eq, isNull } from 'drizzle-orm';
import { db } from '../db/client.js';
import { floorTables, shifts } from '../db/schema/index.js';
import { createApiKey, createOrganisation } from '../services/keys/key-service.js';
import { configureDemoVenue } from '../services/venue-config/demo-venue.js';
import { createVenue } from '../services/venues/venue-service.js';

export interface DemoResult {
  organisationId: string;
  venueId: string;
  keys: { live: string; test: string; publishable: string };
  /** The test organisation and its copy of the venue: the test key sees only these. */
  testOrganisationId: string;
  testVenueId: string;
  /** What a first booking needs to know: when the venue seats, and its tables. */
  venue: {
    name: string;
    timezone: string;
    shifts: Array<{ name: string; startTime: string; lastSeatingTime: string; endTime: string }>;
    tables: Array<{ name: string; minSeats: number; maxSeats: number }>;
  };
}

/** A live organisation with one configured venue, plus a test organisation for the test key; `port`: the API's. */
export async function buildDemo(port: number): Promise<DemoResult> {
  // The widget may be tried from pages served next to the API.
  const origins = [`http://localhost:${port}`, `http://127.0.0.1:${port}`];
  const org = await createOrganisation('Demo Restaurants', false);
  const venue = await createVenue(org.id, { name: 'Trattoria Demo', timezone: 'Europe/Rome', countryCode: 'IT' });
  const testOrg = await createOrganisation('Demo Restaurants (test)', true);
  const testVenue = await createVenue(testOrg.id, { name: 'Trattoria Demo (test)', timezone: 'Europe/Rome', countryCode: 'IT' });
  const setup = await configureDemoVenue(org.id, venue.id);
  await configureDemoVenue(testOrg.id, testVenue.id);
  const live = await createApiKey({ organisationId: org.id, kind: 'live', name: 'demo live key' });
  const test = await createApiKey({ organisationId: testOrg.id, kind: 'test', name: 'demo test key' });
  const publishable = await createApiKey({ organisationId: org.id, kind: 'publishable', name: 'demo widget', allowedOrigins: origins });
  const shiftRows = await db()
    .select({ name: shifts.name, startTime: shifts.startTime, lastSeatingTime: shifts.lastSeatingTime, endTime: shifts.endTime })
    .from(shifts)
    .where(eq(shifts.venueId, venue.id))
    .orderBy(asc(shifts.startTime));
  const tableRows = await db()
    .select({ name: floorTables.name, minSeats: floorTables.minSeats, maxSeats: floorTables.maxSeats })
    .from(floorTables)
    .where(and(eq(floorTables.floorPlanId, setup.floorPlanId), isNull(floorTables.deletedAt)))
    .orderBy(asc(floorTables.name));
  return {
    organisationId: org.id,
    venueId: venue.id,
    keys: { live: live.key, test: test.key, publishable: publishable.key },
    testOrganisationId: testOrg.id,
    testVenueId: testVenue.id,
    venue: { name: venue.name, timezone: venue.timezone, shifts: shiftRows, tables: tableRows },
  };
}
