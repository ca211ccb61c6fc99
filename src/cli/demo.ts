import { createApiKey, createOrganisation } from '../services/keys/key-service.js';
import { configureDemoVenue } from '../services/venue-config/demo-venue.js';
import { createVenue } from '../services/venues/venue-service.js';

export interface DemoResult {
  organisationId: string;
  venueId: string;
  keys: { live: string; test: string; publishable: string };
}

const origins = ['http://localhost:3000', 'http://127.0.0.1:3000'];

/** A live organisation with one configured venue and one key of each kind, all of which see that venue. */
export async function buildDemo(): Promise<DemoResult> {
  const org = await createOrganisation('Demo Restaurants', false);
  const venue = await createVenue(org.id, { name: 'Trattoria Demo', timezone: 'Europe/Rome', countryCode: 'IT' });
  await configureDemoVenue(org.id, venue.id);
  const live = await createApiKey({ organisationId: org.id, kind: 'live', name: 'demo live key' });
  const test = await createApiKey({ organisationId: org.id, kind: 'test', name: 'demo test key' });
  const publishable = await createApiKey({ organisationId: org.id, kind: 'publishable', name: 'demo widget', allowedOrigins: origins });
  return { organisationId: org.id, venueId: venue.id, keys: { live: live.key, test: test.key, publishable: publishable.key } };
}
