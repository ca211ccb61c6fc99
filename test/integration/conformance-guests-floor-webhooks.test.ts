import { describe, expect, it } from 'vitest';

import { client, createKey, createTenant } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useWebhookPipeline } from '../support/webhook-fixtures.js';
import { eventually } from '../support/eventually.js';
import { expectedSignature, type ReceivedWebhook } from '../support/webhook-receiver.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';

// Its own queues, so that another test file's workers never take these jobs.
useOwnQueuePrefix('cgfw');

const pipeline = useWebhookPipeline();

const instant = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
}

const receiver = () => pipeline.startReceiver();

const envelopeOf = (request: ReceivedWebhook) => JSON.parse(request.body.toString('utf8'));

/** A configured live venue with a registered destination and an automation on the given events. */
async function webhookVenue(eventTypes: string[]) {
  const tenant = await createTenant();
  await configureVenue(tenant.venueId);
  const api = client(pipeline.url, tenant.key);
  const r = await receiver();
  const endpoint = await api.post('/webhook-endpoints', { venueId: tenant.venueId, url: r.url });
  expect(endpoint.status).toBe(201);
  const automation = await api.post('/automations', {
    venueId: tenant.venueId,
    name: 'Partner CRM',
    eventTypes,
    action: { type: 'partner_notification' },
  });
  expect(automation.status).toBe(201);
  return { tenant, api, r, secret: endpoint.body.secret as string, automation: automation.body.automation };
}

async function deliveriesSeenWith(organisationId: string, scopes: string[], query: string): Promise<any[]> {
  const reader = client(pipeline.url, await createKey(organisationId, { scopes }));
  const res = await reader.get(`/webhook-deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data;
}

describe('webhooks end to end, from a real reservation', () => {
  it('sends the envelope of docs/webhooks.md with the reservation in its v1 shape and the guest summary', async () => {
    const { tenant, api, r, secret, automation } = await webhookVenue(['reservation_created']);
    const booked = await api.post('/reservations', {
      venueId: tenant.venueId,
      serviceDate: localDate(1),
      time: '19:00',
      partySize: 2,
      guest: { phone: '347 123 4567', firstName: 'Ada', lastName: 'Lovelace', allergies: 'shellfish', allergens: ['crustaceans'] },
    });
    expect(booked.status).toBe(201);
    const [request] = await r.waitFor(1);
    const key = String(request.headers['x-service-idempotency-key']);
    const envelope = envelopeOf(request);

    expect(Object.keys(envelope).sort()).toEqual(['apiVersion', 'automation', 'createdAt', 'data', 'eventId', 'id', 'type', 'venueId']);
    expect(envelope.id).toBe(key);
    expect(key).toMatch(/^automation:[0-9a-f-]{36}:0$/);
    expect(envelope.automation).toEqual({ name: 'Partner CRM', runId: key.split(':')[1] });
    expect(envelope.automation.runId).toMatch(uuid);
    expect(envelope).toMatchObject({ type: 'reservation_created', venueId: tenant.venueId, apiVersion: 'v1' });
    expect(envelope.createdAt).toMatch(instant);
    expect(envelope.eventId).toMatch(uuid);
    expect(request.headers['x-service-signature']).toBe(`v1=${expectedSignature(secret, request)}`);

    // data is the reservation exactly as GET /reservations/{id} shows it (nothing changed since).
    const read = await api.get(`/reservations/${booked.body.reservation.id}`);
    expect(envelope.data).toEqual({ reservation: read.body.reservation });
    expect(envelope.data.reservation.guest).toEqual({ name: 'Ada Lovelace', allergies: 'shellfish', allergens: ['crustaceans'] });

    const history = await client(pipeline.url, tenant.key).get(`/events?venueId=${tenant.venueId}&type=reservation_created`);
    expect(history.body.data.map((e: { id: string }) => e.id)).toContain(envelope.eventId);

    // GET /webhook-deliveries shows the stored envelope, filtered by the reader's scopes.
    const query = `?automationId=${automation.id}&status=delivered`;
    await eventually(
      async () => (await deliveriesSeenWith(tenant.organisationId, ['webhooks:read'], query)).length === 1,
      10_000,
      'delivered',
    );
    const [full] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read', 'reservations:read', 'guests:read'], query);
    expect(full.payload).toEqual(envelope);
    const [noGuests] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read', 'reservations:read'], query);
    const guestId = envelope.data.reservation.guestId;
    expect(noGuests.payload.data.reservation).toMatchObject({ id: booked.body.reservation.id, guest: { id: guestId } });
    expect(noGuests.payload.data.reservation.guest).toEqual({ id: guestId });
    expect(JSON.stringify(noGuests.payload)).not.toContain('Lovelace');
    expect(JSON.stringify(noGuests.payload)).not.toContain('shellfish');
    const [viaEvents] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read', 'events:read', 'guests:read'], query);
    expect(viaEvents.payload).toEqual(envelope);
    const [bare] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read'], query);
    expect(bare.payload).toEqual({ ...envelope, data: { reservation: null } });
  });

  it('sends guest_profile_changed with {guest, reason}; without guests:read the guest is reduced to its id', async () => {
    const { tenant, api, r, automation } = await webhookVenue(['guest_profile_changed']);
    const created = await api.post('/guests', {
      venueId: tenant.venueId,
      phone: '+39 06 1234 5678',
      firstName: 'Grace',
      allergies: 'gluten',
    });
    expect(created.status).toBe(201);
    const [request] = await r.waitFor(1);
    const envelope = envelopeOf(request);
    expect(envelope.type).toBe('guest_profile_changed');
    expect(envelope.data).toEqual({ guest: created.body.guest, reason: 'guest_created' });

    const query = `?automationId=${automation.id}&eventType=guest_profile_changed`;
    await eventually(
      async () => (await deliveriesSeenWith(tenant.organisationId, ['webhooks:read'], query))[0]?.payload,
      10_000,
      'payload',
    );
    const [bare] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read'], query);
    expect(bare.payload.data).toEqual({ guest: { id: created.body.guest.id }, reason: 'guest_created' });
    const [full] = await deliveriesSeenWith(tenant.organisationId, ['webhooks:read', 'guests:read'], query);
    expect(full.payload).toEqual(envelope);
  });
});

describe('guests and service tags (docs/api.md)', () => {
  it('answers a service tag with exactly id, name and updatedAt, single and in lists', async () => {
    const t = await createTenant();
    const api = client(pipeline.url, t.key);
    const created = await api.post('/service-tags', { venueId: t.venueId, name: 'VIP' });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      serviceTag: { id: expect.stringMatching(uuid), name: 'VIP', updatedAt: expect.stringMatching(instant) },
      livemode: true,
    });
    const list = await api.get('/service-tags?limit=1');
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [created.body.serviceTag], nextCursor: null, livemode: true });
  });

  it('lists guests with the Guest fields, filters and limits of GET /guests', async () => {
    const t = await createTenant();
    const api = client(pipeline.url, t.key);
    const guest = (
      await api.post('/guests', {
        venueId: t.venueId,
        phone: '06 1234 5678',
        firstName: 'Zoë',
        email: 'Zoe@Example.com',
        externalRef: 'crm-7',
      })
    ).body.guest;
    await api.post('/guests', { venueId: t.venueId, phone: '06 1234 5679', firstName: 'Other' });
    const list = await api.get('/guests?limit=1');
    expect(list.status).toBe(200);
    expect(Object.keys(list.body).sort()).toEqual(['data', 'livemode', 'nextCursor']);
    expect(Object.keys(list.body.data[0]).sort()).toEqual(
      [
        'id',
        'phone',
        'name',
        'firstName',
        'lastName',
        'email',
        'allergies',
        'allergens',
        'notes',
        'visitCount',
        'noShowCount',
        'cancelledCount',
        'lastVisitAt',
        'consents',
        'campaignTags',
        'serviceTags',
        'externalRef',
        'createdAt',
        'updatedAt',
        'venueId',
        'deletedAt',
      ].sort(),
    );
    expect(list.body.nextCursor).toEqual(expect.any(String));
    const next = await api.get(`/guests?limit=1&cursor=${encodeURIComponent(list.body.nextCursor)}`);
    expect(next.body.data.map((g: any) => g.firstName)).toEqual(['Other']);

    const ids = async (query: string) => (await api.get(`/guests?${query}`)).body.data.map((g: any) => g.id);
    expect(await ids('search=zoe')).toEqual([guest.id]);
    expect(await ids(`phone=${encodeURIComponent('+39 06 1234 5678')}`)).toEqual([guest.id]);
    expect(await ids('email=zoe@example.com')).toEqual([guest.id]);
    expect(await ids('externalRef=crm-7')).toEqual([guest.id]);

    for (const query of [
      'limit=0',
      'limit=201',
      'limit=x',
      'search=ab',
      `search=${'a'.repeat(201)}`,
      'search=a%20b%20c%20d%20e%20f%20g%20h%20i',
      'cursor=bogus',
      'changedAfter=2026-02-30T00:00:00Z',
    ]) {
      const res = await api.get(`/guests?${query}`);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toEqual([query.split('=')[0]]);
    }
    const badPhone = await api.get('/guests?phone=12');
    expectError(badPhone, 400, 'invalid_request');
    expect(badPhone.body.error.details).toMatchObject({ field: 'phone', fields: ['phone'] });
  });

  it('DELETE /guests/{id} moves the guest to the trash (204); lookup then answers found: false with the normalised phone', async () => {
    const t = await createTenant();
    const api = client(pipeline.url, t.key);
    const guest = (await api.post('/guests', { venueId: t.venueId, phone: '06 1234 5678' })).body.guest;
    const found = await api.get(`/guests/lookup?venueId=${t.venueId}&phone=${encodeURIComponent('0039 06 1234 5678')}`);
    expect(found.body).toEqual({ found: true, guest, livemode: true });
    const deleted = await api.delete(`/guests/${guest.id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get('/guests')).body.data).toEqual([]);
    const synced = await api.get('/guests?changedAfter=2000-01-01T00:00:00.000Z');
    expect(synced.body.data).toEqual([expect.objectContaining({ id: guest.id, deletedAt: expect.stringMatching(instant) })]);
    const lookup = await api.get(`/guests/lookup?venueId=${t.venueId}&phone=${encodeURIComponent('06 1234 5678')}`);
    expect(lookup.status).toBe(200);
    expect(lookup.body).toEqual({ found: false, phone: '+390612345678', livemode: true });
    const invalid = await api.get(`/guests/lookup?venueId=${t.venueId}&phone=12`);
    expectError(invalid, 400, 'invalid_request');
    expect(invalid.body.error.details.field).toBe('phone');

    expectError(await api.delete('/guests/00000000-0000-4000-8000-000000000000'), 404, 'not_found');
    expectError(await api.delete('/guests/not-a-uuid'), 404, 'not_found');
    expectError(await client(pipeline.url, (await createTenant()).key).delete(`/guests/${guest.id}`), 404, 'not_found');
    const reader = client(pipeline.url, await createKey(t.organisationId, { scopes: ['guests:read'] }));
    const refused = await reader.delete(`/guests/${guest.id}`);
    expectError(refused, 403, 'insufficient_scope');
    expect(refused.body.error.details.requiredScope).toBe('guests:write');
  });
});

describe('text PostgreSQL cannot hold', () => {
  it('answers 400 naming the field for a NUL character, with details.field "phone" for a phone', async () => {
    const t = await createTenant();
    const fixture = await configureVenue(t.venueId);
    const api = client(pipeline.url, t.key);
    const phone = await api.post('/guests', { venueId: t.venueId, phone: '06\u00001234 5678' });
    expectError(phone, 400, 'invalid_request');
    expect(phone.body.error.details).toEqual({ fields: ['phone'], field: 'phone' });
    const lookup = await api.get(`/guests/lookup?venueId=${t.venueId}&phone=${encodeURIComponent('06\u00001234')}`);
    expect(lookup.body.error.details).toEqual({ fields: ['phone'], field: 'phone' });
    for (const [res, field] of [
      [await api.post('/guests', { venueId: t.venueId, phone: '06 1234 5678', firstName: 'A\u0000' }), 'firstName'],
      [await api.get(`/guests?search=${encodeURIComponent('abc\u0000')}`), 'search'],
      [await api.post('/service-tags', { venueId: t.venueId, name: 'V\u0000' }), 'name'],
      [await api.post(`/venues/${t.venueId}/closures`, { from: '2030-01-01', to: '2030-01-01', reason: 'x\u0000' }), 'reason'],
      [await api.put(`/venues/${t.venueId}/floor-plans/${fixture.planId}`, { name: 'P\u0000' }), 'name'],
      [await api.post('/webhook-endpoints', { venueId: t.venueId, url: 'https://example.com/\u0000' }), 'url'],
    ] as const) {
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toEqual([field]);
    }
  });
});

describe('venue configuration and the floor (docs/api.md)', () => {
  it('lists tables, areas and pacing rules and reads a floor plan with exactly their documented fields', async () => {
    const t = await createTenant();
    const fixture = await configureVenue(t.venueId, { pacing: [{ maxCovers: 20, windowMinutes: 30 }], combinations: [['T2', 'T4']] });
    const api = client(pipeline.url, t.key);

    const tables = await api.get(`/venues/${t.venueId}/tables`);
    expect(tables.status).toBe(200);
    expect(tables.body.nextCursor).toBeNull();
    expect(tables.body.data.map((x: any) => x.name)).toEqual(['T2', 'T4', 'T6']);
    expect(tables.body.data[0]).toEqual({
      id: fixture.tableIds.T2,
      floorPlanId: fixture.planId,
      areaId: expect.stringMatching(uuid),
      name: 'T2',
      shape: 'square',
      minSeats: 1,
      maxSeats: 2,
      isBlocked: false,
      combinationIds: fixture.combinationIds,
      updatedAt: expect.stringMatching(instant),
    });

    const areas = await api.get(`/venues/${t.venueId}/areas`);
    expect(areas.body.data).toEqual([
      {
        id: tables.body.data[0].areaId,
        name: 'Room',
        icon: expect.any(String),
        position: 0,
        widthCm: 1000,
        heightCm: 800,
        updatedAt: expect.stringMatching(instant),
      },
    ]);

    const pacing = await api.get(`/venues/${t.venueId}/pacing-rules`);
    expect(pacing.body.data).toEqual([
      {
        id: expect.stringMatching(uuid),
        shiftId: fixture.shiftIds[0],
        isEnabled: true,
        maxCovers: 20,
        windowMinutes: 30,
        updatedAt: expect.stringMatching(instant),
      },
    ]);

    const plan = await api.get(`/venues/${t.venueId}/floor-plans/${fixture.planId}`);
    expect(plan.status).toBe(200);
    expect(Object.keys(plan.body.floorPlan).sort()).toEqual([
      'areas',
      'combinations',
      'id',
      'isActive',
      'name',
      'tables',
      'updatedAt',
      'version',
    ]);
    expect(plan.body.floorPlan.areas[0]).toEqual({ id: areas.body.data[0].id, name: 'Room', widthCm: 1000, heightCm: 800 });
    expect(Object.keys(plan.body.floorPlan.tables[0]).sort()).toEqual(
      [
        'areaId',
        'heightCm',
        'id',
        'isBlocked',
        'maxSeats',
        'minSeats',
        'name',
        'positionXCm',
        'positionYCm',
        'rotationDegrees',
        'shape',
        'widthCm',
      ].sort(),
    );
    expect(plan.body.floorPlan.combinations).toEqual([
      { id: fixture.combinationIds[0], tableIds: [fixture.tableIds.T2, fixture.tableIds.T4] },
    ]);

    const floorReader = client(pipeline.url, await createKey(t.organisationId, { scopes: ['floor:read'] }));
    const noVenues = await floorReader.get(`/venues/${t.venueId}/pacing-rules`);
    expectError(noVenues, 403, 'insufficient_scope');
    expect(noVenues.body.error.details.requiredScope).toBe('venues:read');
    const other = client(pipeline.url, (await createTenant()).key);
    for (const path of ['tables', 'areas', 'pacing-rules', `floor-plans/${fixture.planId}`])
      expectError(await other.get(`/venues/${t.venueId}/${path}`), 404, 'not_found');
  });
});

describe('dates PostgreSQL cannot hold are a 400, never a 500', () => {
  it('refuses year 0000 dates and instants outside years 0001–9999 in bodies and list parameters', async () => {
    const t = await createTenant();
    await configureVenue(t.venueId);
    const api = client(pipeline.url, t.key);
    const V = `/venues/${t.venueId}`;
    const closure = await api.post(`${V}/closures`, { from: '0000-01-01', to: '0000-01-02' });
    expectError(closure, 400, 'invalid_request');
    expect(closure.body.error.details.fields).toEqual(['from', 'to']);
    const shift = await api.post(`${V}/shifts`, {
      name: 'Early',
      daysOfWeek: [1],
      startTime: '06:00',
      lastSeatingTime: '06:30',
      endTime: '07:00',
      validFrom: '0000-12-31',
    });
    expectError(shift, 400, 'invalid_request');
    expect(shift.body.error.details.fields).toEqual(['validFrom']);
    for (const [path, field] of [
      ['/guests?changedAfter=0000-01-01T00:00:00Z', 'changedAfter'],
      ['/guests?changedAfter=9999-12-31T23:59:59-14:00', 'changedAfter'],
      [`${V}/tables?changedAfter=0000-06-01T00:00:00.000Z`, 'changedAfter'],
      ['/events?from=0000-01-01T00:00:00Z', 'from'],
    ]) {
      const res = await api.get(path);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toEqual([field]);
    }
    // The edges that can be written YYYY-MM-DDTHH:mm:ss.sssZ are fine.
    expect((await api.get('/guests?changedAfter=0001-01-01T00:00:00Z')).status).toBe(200);
    expect((await api.get('/guests?changedAfter=9999-12-31T23:59:59.999Z')).status).toBe(200);
    expect((await api.post(`${V}/closures`, { from: '9999-12-28', to: '9999-12-28' })).status).toBe(201);
    const beyond = await api.post(`${V}/closures`, { from: '0001-01-01', to: '9999-12-29' });
    expectError(beyond, 400, 'invalid_request');
    expect(beyond.body.error.details.fields).toEqual(['from', 'to']);
  });
});
