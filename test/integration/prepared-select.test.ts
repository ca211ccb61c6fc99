import { and, eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { prepareSelectAll } from '../../src/db/prepared-select.js';
import { apiKeys, venues } from '../../src/db/schema/index.js';
import { createTenant } from '../support/harness.js';

describe('prepareSelectAll', () => {
  it('returns the rows drizzle returns: timestamps, arrays, nulls and numbers decoded alike', async () => {
    const t = await createTenant({ key: { venueIds: null, allowedOrigins: [], rateLimitPerMinute: 42 } });
    await createTenant();
    const byOrganisation = eq(apiKeys.organisationId, sql.placeholder('organisationId'));
    const selectKeys = prepareSelectAll(apiKeys, byOrganisation);
    const rows = await selectKeys({ organisationId: t.organisationId });
    expect(rows).toHaveLength(1);
    expect(rows).toEqual(await db().select().from(apiKeys).where(eq(apiKeys.organisationId, t.organisationId)));
    expect(rows[0].createdAt).toBeInstanceOf(Date);
    expect(rows[0].rateLimitPerMinute).toBe(42);

    const venueCondition = and(eq(venues.id, sql.placeholder('venueId')), eq(venues.organisationId, sql.placeholder('organisationId')))!;
    const selectVenue = prepareSelectAll(venues, venueCondition);
    expect(await selectVenue({ venueId: t.venueId, organisationId: t.organisationId })).toEqual(
      await db().select().from(venues).where(eq(venues.id, t.venueId)),
    );
    expect(await selectVenue({ venueId: t.venueId, organisationId: t.keyId })).toEqual([]);
  });
});
