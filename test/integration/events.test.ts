import { describe, expect, it } from 'vitest';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { emitReservationEvent, plausibleReservation } from '../support/webhook-fixtures.js';

const server = useTestServer();

describe('GET /events', () => {
  it('lists the events of the organisation with their data as of the event time', async () => {
    const tenant = await createTenant();
    const api = client(server.url, tenant.key);
    const reservation = plausibleReservation(tenant.venueId);
    const created = await emitReservationEvent(tenant, { reservation });
    const confirmed = await emitReservationEvent(tenant, {
      type: 'reservation_confirmed',
      reservation: { ...reservation, status: 'confirmed', partySize: 5 },
    });
    const other = await createTenant();
    await emitReservationEvent(other);

    const res = await api.get('/events');
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    expect(res.body.data).toEqual([
      {
        id: created.eventId,
        type: 'reservation_created',
        venueId: tenant.venueId,
        createdAt: expect.stringMatching(/Z$/),
        data: { reservation },
      },
      {
        id: confirmed.eventId,
        type: 'reservation_confirmed',
        venueId: tenant.venueId,
        createdAt: expect.any(String),
        data: { reservation: { ...reservation, status: 'confirmed', partySize: 5 } },
      },
    ]);
    expect(res.body.data[0].createdAt <= res.body.data[1].createdAt).toBe(true);
  });

  it('filters by venue, type and an instant range, and pages with a cursor', async () => {
    const tenant = await createTenant();
    const api = client(server.url, tenant.key);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await emitReservationEvent(tenant)).eventId);
    const cancelled = await emitReservationEvent(tenant, { type: 'reservation_cancelled' });
    const all = (await api.get(`/events?venueId=${tenant.venueId}`)).body.data as Array<{ id: string; createdAt: string }>;
    expect(all.map((e) => e.id)).toEqual([...ids, cancelled.eventId]);

    expect((await api.get('/events?type=reservation_cancelled')).body.data.map((e: { id: string }) => e.id)).toEqual([cancelled.eventId]);
    const range = await api.get(`/events?from=${encodeURIComponent(all[1].createdAt)}&to=${encodeURIComponent(all[2].createdAt)}`);
    expect(range.body.data.map((e: { id: string }) => e.id)).toEqual([ids[1], ids[2]]);

    const first = await api.get('/events?limit=2');
    expect(first.body.data.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    const second = await api.get(`/events?limit=2&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.data.map((e: { id: string }) => e.id)).toEqual([ids[2], cancelled.eventId]);
    expect(second.body.nextCursor).toBeNull();
    const changed = await api.get(`/events?changedAfter=${encodeURIComponent(all[2].createdAt)}`);
    expect(changed.body.data.map((e: { id: string }) => e.id)).toEqual([cancelled.eventId]);
  });

  it('needs events:read and shows a venue-limited key only its venues', async () => {
    const tenant = await createTenant();
    await emitReservationEvent(tenant);
    const noScope = await createKey(tenant.organisationId, { scopes: ['reservations:read'] });
    const denied = await client(server.url, noScope).get('/events');
    expect(denied.status).toBe(403);
    expect(denied.body.error.details.requiredScope).toBe('events:read');

    const other = await createTenant();
    const limited = await createKey(tenant.organisationId, { scopes: ['events:read'], venueIds: [crypto.randomUUID()] });
    expect((await client(server.url, limited).get('/events')).body.data).toEqual([]);
    expect((await client(server.url, limited).get(`/events?venueId=${tenant.venueId}`)).status).toBe(404);
    expect((await client(server.url, tenant.key).get(`/events?venueId=${other.venueId}`)).status).toBe(404);
  });

  it.each([
    ['type=table_exploded', ['type']],
    ['from=yesterday', ['from']],
    ['from=2030-01-02T00:00:00Z&to=2030-01-01T00:00:00Z', ['from', 'to']],
    ['venueId=nope', ['venueId']],
    ['limit=201', ['limit']],
    ['cursor=garbage', ['cursor']],
    ['colour=red', ['colour']],
  ])('answers 400 for %s', async (query, fields) => {
    const tenant = await createTenant();
    const res = await client(server.url, tenant.key).get(`/events?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(fields);
  });
});
