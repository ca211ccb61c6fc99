import { describe, expect, it } from 'vitest';
import { client, createTenant, useTestServer, type Client } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

/**
 * Inputs that fuzzing found answered 500 (docs/api.md "Dates and instants", "Text"): each is now the
 * contract's 400 naming the field, and the edges of what the API takes still answer.
 */

const server = useTestServer();

async function tenantApi(): Promise<{ api: Client; venueId: string }> {
  const t = await createTenant();
  await configureVenue(t.venueId);
  return { api: client(server.url, t.key), venueId: t.venueId };
}

function expectFields(res: { status: number; body: any }, fields: string[]) {
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(res.body.error.code).toBe('invalid_request');
  expect(res.body.error.details.fields).toEqual(fields);
}

describe('service dates at the ends of the calendar', () => {
  it('GET /reservations: a window reaching past 9999-12-28 or before 0001-01-02 is a 400 naming its end', async () => {
    const { api } = await tenantApi();
    for (const to of ['9999-12-29', '9999-12-30', '9999-12-31'])
      expectFields(await api.get(`/reservations?from=2026-01-01&to=${to}`), ['to']);
    expectFields(await api.get('/reservations?from=0001-01-01'), ['from']);
  });

  it('GET /reservations: the widest window taken answers (its query stays inside the instants PostgreSQL holds)', async () => {
    const { api, venueId } = await tenantApi();
    const res = await api.get(`/reservations?venueId=${venueId}&from=0001-01-02&to=9999-12-28`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([]);
  });
});

describe('a lone UTF-16 surrogate is invalid text, as U+0000 is', () => {
  it('POST /imports/reservations and /imports/guests: a 400 naming the row field', async () => {
    const { api, venueId } = await tenantApi();
    const reservations = await api.request('POST', '/imports/reservations', {
      rawBody: `{"rows":[{"venueId":"${venueId}","serviceDate":"2030-01-01","time":"19:00","partySize":2,"guestName":"\\ud800"}]}`,
      headers: { 'content-type': 'application/json' },
    });
    expectFields(reservations, ['rows.0.guestName']);
    const guests = await api.request('POST', '/imports/guests', {
      rawBody: `{"rows":[{"venueId":"${venueId}","phone":"06 1234 5678"},{"venueId":"${venueId}","phone":"06 1234 5679","notes":"a\\udc00b"}]}`,
      headers: { 'content-type': 'application/json' },
    });
    expectFields(guests, ['rows.1.notes']);
  });

  it('anywhere else too (a body field, a key), while a well-formed pair is text like any other', async () => {
    const { api, venueId } = await tenantApi();
    const booked = await api.post('/reservations', { venueId, serviceDate: localDate(1), time: '19:00', partySize: 2 });
    const id = booked.body.reservation.id as string;
    const json = { 'content-type': 'application/json' };
    expectFields(await api.request('PATCH', `/reservations/${id}`, { rawBody: '{"notes":"a\\ud800b"}', headers: json }), ['notes']);
    expect((await api.get(`/reservations/${id}`)).body.reservation.notes).toBeNull();
    expectFields(
      await api.request('POST', '/venues', { rawBody: '{"name":"V","timezone":"UTC","countryCode":"GB","\\udfff":1}', headers: json }),
      ['\udfff'],
    );
    const pair = await api.post('/venues', { name: 'Caf\u00e9 \ud83d\ude00', timezone: 'UTC', countryCode: 'GB' });
    expect(pair.status).toBe(201);
    expect(pair.body.venue.name).toBe('Caf\u00e9 \ud83d\ude00');
  });
});
