// The tenant bench/reservations.ts books for: a database of its own (dropped and re-created, migrated
// by this checkout's code), one organisation with `venues` venues configured like the demo, and a live
// key without a practical rate limit. Run as a script in another checkout (`npx tsx
// bench/support/seed-booking-venues.ts <database> <venues>`), it prints them as one line of JSON: so
// that each code books on a schema its own migrations made.
import { fileURLToPath } from 'node:url';
import { prepareBenchDatabase } from './bench-database.js';

export interface BookingVenues {
  databaseUrl: string;
  queuePrefix: string;
  key: string;
  venueIds: string[];
}

export async function seedBookingVenues(database: string, venueCount: number): Promise<BookingVenues> {
  const databaseUrl = await prepareBenchDatabase(database);
  const { createApiKey, createOrganisation } = await import('../../src/services/keys/key-service.js');
  const { createVenue } = await import('../../src/services/venues/venue-service.js');
  const { configureDemoVenue } = await import('../../src/services/venue-config/demo-venue.js');
  const org = await createOrganisation('Bench', false);
  const venueIds: string[] = [];
  for (let i = 0; i < venueCount; i++) {
    const venue = await createVenue(org.id, { name: `Bench ${i}`, timezone: 'Europe/Rome', countryCode: 'IT' });
    await configureDemoVenue(org.id, venue.id);
    venueIds.push(venue.id);
  }
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 });
  return { databaseUrl, queuePrefix: process.env.QUEUE_PREFIX!, key, venueIds };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const seeded = await seedBookingVenues(process.argv[2], Number(process.argv[3]));
  console.log(JSON.stringify(seeded));
  await (await import('../../src/db/client.js')).pool().end();
}
