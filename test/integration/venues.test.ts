import { describe, expect, it } from 'vitest';
import { client, createTenant, useTestServer } from '../support/harness.js';

const server = useTestServer();

describe('venues', () => {
  it('reads a venue with livemode and ETag', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).get(`/venues/${t.venueId}`);
    expect(res.status).toBe(200);
    expect(res.body.livemode).toBe(true);
    expect(res.body.venue).toMatchObject({ id: t.venueId, timezone: 'Europe/Rome', countryCode: 'IT', slotIntervalMinutes: 15 });
    expect(res.headers.get('etag')).toBe(`"${res.body.venue.updatedAt}"`);
  });
});
