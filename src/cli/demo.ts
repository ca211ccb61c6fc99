import { config } from '../config.js';
import { createApiKey, createOrganisation } from '../services/keys/key-service.js';
import { configureDemoVenue } from '../services/venue-config/demo-venue.js';
import { createVenue } from '../services/venues/venue-service.js';

export interface DemoResult {
  organisationId: string;
  venueId: string;
  keys: { live: string; test: string; publishable: string };
}

// The widget may be tried from pages served next to the API.
const origins = [`http://localhost:${config.PORT}`, `http://127.0.0.1:${config.PORT}`];

/** A live organisation with one configured venue, plus a test organisation for the test key. */
export async function buildDemo(): Promise<DemoResult> {
  const org = await createOrganisation('Demo Restaurants', false);
  const venue = await createVenue(org.id, { name: 'Trattoria Demo', timezone: 'Europe/Rome', countryCode: 'IT' });
  const testOrg = await createOrganisation('Demo Restaurants (test)', true);
  const testVenue = await createVenue(testOrg.id, { name: 'Trattoria Demo (test)', timezone: 'Europe/Rome', countryCode: 'IT' });
  await configureDemoVenue(org.id, venue.id);
  await configureDemoVenue(testOrg.id, testVenue.id);
  const live = await createApiKey({ organisationId: org.id, kind: 'live', name: 'demo live key' });
  const test = await createApiKey({ organisationId: testOrg.id, kind: 'test', name: 'demo test key' });
  const publishable = await createApiKey({ organisationId: org.id, kind: 'publishable', name: 'demo widget', allowedOrigins: origins });
  return { organisationId: org.id, venueId: venue.id, keys: { live: live.key, test: test.key, publishable: publishable.key } };
}
