import { describe, expect, it } from 'vitest';
import { client, createKey, createTenant, useTestServer } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

const server = useTestServer();

/** A strict RFC 4180 reader: quoted fields, doubled quotes, CRLF line ends. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else field += c;
  }
  expect(field).toBe('');
  return rows;
}

async function setup() {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId);
  const api = client(server.url, t.key);
  const day1 = localDate(1);
  const day2 = localDate(2);
  const tricky = (
    await api.post('/reservations', {
      venueId: t.venueId,
      serviceDate: day1,
      time: '20:00',
      partySize: 2,
      notes: 'Table by the window, please\n"quiet" corner',
      externalRef: 'ref,1',
      guest: { phone: '347 123 4567', firstName: 'Zoë', lastName: "O'Brien, Jr.", allergens: ['nuts', 'milk'] },
    })
  ).body.reservation;
  const early = (await api.post('/reservations', { venueId: t.venueId, serviceDate: day1, time: '18:30', partySize: 5 })).body.reservation;
  const later = (
    await api.post('/reservations', {
      venueId: t.venueId,
      serviceDate: day2,
      time: '19:00',
      partySize: 4,
      guest: { phone: '347 000 1111' },
    })
  ).body.reservation;
  // Outside the range.
  await api.post('/reservations', { venueId: t.venueId, serviceDate: localDate(3), time: '19:00', partySize: 2 });
  return { ...t, fixture, api, day1, day2, tricky, early, later };
}

const reservationColumns = [
  'id',
  'venueId',
  'serviceDate',
  'time',
  'startsAt',
  'endsAt',
  'partySize',
  'status',
  'source',
  'sourceDetail',
  'externalRef',
  'tableAssigned',
  'needsAttention',
  'tables',
  'notes',
  'guestId',
  'createdAt',
  'updatedAt',
];
const guestColumns = ['guestName', 'guestPhone', 'guestEmail', 'guestAllergies', 'guestAllergens', 'guestVisitCount', 'guestNoShowCount'];

describe('GET /exports/reservations', () => {
  it('streams CSV with a header, proper quoting, in startsAt order, with guest columns for guests:read', async () => {
    const { api, venueId, day1, day2, tricky, early, later } = await setup();
    const res = await api.get(`/exports/reservations?venueId=${venueId}&from=${day1}&to=${day2}&format=csv`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="reservations-${venueId}-${day1}-${day2}.csv"`);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const [header, ...lines] = parseCsv(res.text);
    expect(header).toEqual([...reservationColumns, ...guestColumns]);
    expect(lines.map((l) => l[0])).toEqual([early.id, tricky.id, later.id]);
    const row = Object.fromEntries(header.map((h, i) => [h, lines[1][i]]));
    expect(row).toEqual({
      id: tricky.id,
      venueId,
      serviceDate: day1,
      time: '20:00',
      startsAt: tricky.startsAt,
      endsAt: tricky.endsAt,
      partySize: '2',
      status: 'created',
      source: 'api',
      sourceDetail: 'test key',
      externalRef: 'ref,1',
      tableAssigned: 'true',
      needsAttention: 'false',
      tables: 'T2',
      notes: 'Table by the window, please\n"quiet" corner',
      guestId: tricky.guestId,
      createdAt: expect.any(String),
      updatedAt: tricky.updatedAt,
      guestName: "Zoë O'Brien, Jr.",
      guestPhone: '+393471234567',
      guestEmail: '',
      guestAllergies: '',
      guestAllergens: 'nuts|milk',
      guestVisitCount: '0',
      guestNoShowCount: '0',
    });
    // No guest: empty guest cells.
    expect(lines[0].slice(header.indexOf('guestName'))).toEqual(['', '', '', '', '', '', '']);
  });

  it('streams ndjson with the same keys, and leaves the guest columns out without guests:read', async () => {
    const { api, venueId, organisationId, day1, day2, tricky, later } = await setup();
    const res = await api.get(`/exports/reservations?venueId=${venueId}&from=${day1}&to=${day2}&format=ndjson`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.text.endsWith('\n')).toBe(true);
    const records = res.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(records).toHaveLength(3);
    expect(Object.keys(records[0])).toEqual([...reservationColumns, ...guestColumns]);
    expect(records[1]).toMatchObject({
      id: tricky.id,
      partySize: 2,
      tableAssigned: true,
      tables: ['T2'],
      notes: 'Table by the window, please\n"quiet" corner',
      guestName: "Zoë O'Brien, Jr.",
      guestAllergens: ['nuts', 'milk'],
      guestVisitCount: 0,
    });
    expect(records[2]).toMatchObject({ id: later.id, guestPhone: '+393470001111', guestName: null });

    const reader = client(server.url, await createKey(organisationId, { scopes: ['reservations:read'] }));
    const withoutGuests = await reader.get(`/exports/reservations?venueId=${venueId}&from=${day1}&to=${day2}&format=ndjson`);
    const plain = withoutGuests.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(Object.keys(plain[1])).toEqual(reservationColumns);
    expect(plain[1].guestId).toBe(tricky.guestId);
    // The guest's phone, not any '347' (a random UUID may hold one).
    expect(withoutGuests.text).not.toContain('3470001111');
    const csv = await reader.get(`/exports/reservations?venueId=${venueId}&from=${day1}&to=${day2}`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    expect(parseCsv(csv.text)[0]).toEqual(reservationColumns);
    expect(csv.text).not.toContain('Zoë');
  });

  it('answers a header only for an empty range, and refuses bad ranges, formats, scopes and venues', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    const empty = await api.get(`/exports/reservations?venueId=${t.venueId}&from=2026-01-01&to=2026-12-31`);
    expect(empty.status).toBe(200);
    expect(parseCsv(empty.text)).toEqual([[...reservationColumns, ...guestColumns]]);
    expect((await api.get(`/exports/reservations?venueId=${t.venueId}&from=2026-01-01&to=2026-01-01&format=ndjson`)).text).toBe('');

    for (const [query, field] of [
      ['from=2026-01-01&to=2027-01-02', 'to'],
      ['from=2026-03-01&to=2026-02-01', 'to'],
      ['from=2026-01-01&to=2026-01-02&format=xlsx', 'format'],
      ['from=2026-13-01&to=2026-01-02', 'from'],
    ]) {
      const res = await api.get(`/exports/reservations?venueId=${t.venueId}&${query}`);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.body.error.details.fields).toContain(field);
    }
    const noScope = client(server.url, await createKey(t.organisationId, { scopes: ['guests:read'] }));
    expect((await noScope.get(`/exports/reservations?venueId=${t.venueId}&from=2026-01-01&to=2026-01-02`)).body.error).toMatchObject({
      code: 'insufficient_scope',
      details: { requiredScope: 'reservations:read' },
    });
    const stranger = client(server.url, (await createTenant()).key);
    expect((await stranger.get(`/exports/reservations?venueId=${t.venueId}&from=2026-01-01&to=2026-01-02`)).status).toBe(404);
  });
});
