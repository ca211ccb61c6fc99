import { describe, expect, it } from 'vitest';
import { configureDemoVenue } from '../../src/services/venue-config/demo-venue.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';

const server = useTestServer();

const everyDay = [1, 2, 3, 4, 5, 6, 7];
const lunch = { name: 'Lunch', daysOfWeek: everyDay, startTime: '12:00', lastSeatingTime: '14:00', endTime: '15:00' };
const dinner = { name: 'Dinner', daysOfWeek: everyDay, startTime: '19:00', lastSeatingTime: '22:00', endTime: '23:30' };

const shiftKeys = [
  'id',
  'venueId',
  'name',
  'daysOfWeek',
  'startTime',
  'lastSeatingTime',
  'endTime',
  'validFrom',
  'validTo',
  'isActive',
  'updatedAt',
];
const closureKeys = ['id', 'venueId', 'from', 'to', 'shiftIds', 'reason', 'updatedAt'];
const turnTimeRuleKeys = ['id', 'venueId', 'shiftId', 'minPartySize', 'maxPartySize', 'durationMinutes', 'updatedAt'];
const pacingRuleKeys = ['id', 'shiftId', 'isEnabled', 'maxCovers', 'windowMinutes', 'updatedAt'];

const sorted = (o: object) => Object.keys(o).sort();

async function tenantWithClient(options: Parameters<typeof createTenant>[0] = {}) {
  const t = await createTenant(options);
  return { ...t, api: client(server.url, t.key), base: `/venues/${t.venueId}` };
}

async function createShift(api: Client, base: string, body: object = lunch): Promise<string> {
  const res = await api.post(`${base}/shifts`, body);
  expect(res.status).toBe(201);
  return res.body.shift.id;
}

describe('shifts', () => {
  it('creates, lists, reads, changes and deletes a shift with the documented shape', async () => {
    const { api, base, venueId } = await tenantWithClient();
    const created = await api.post(`${base}/shifts`, lunch);
    expect(created.status).toBe(201);
    expect(created.body.livemode).toBe(true);
    expect(sorted(created.body.shift)).toEqual([...shiftKeys].sort());
    expect(created.body.shift).toMatchObject({ ...lunch, venueId, validFrom: null, validTo: null, isActive: true });
    const id = created.body.shift.id;

    const list = await api.get(`${base}/shifts`);
    expect(list.status).toBe(200);
    expect(list.body.data.map((s: { id: string }) => s.id)).toEqual([id]);
    expect(list.body.nextCursor).toBeNull();

    const read = await api.get(`${base}/shifts/${id}`);
    expect(read.body.shift).toEqual(created.body.shift);
    expect(read.headers.get('etag')).toBe(`"${created.body.shift.updatedAt}"`);

    const changed = await api.patch(`${base}/shifts/${id}`, { lastSeatingTime: '14:30', validFrom: '2026-01-01' });
    expect(changed.status).toBe(200);
    expect(changed.body.shift).toMatchObject({ lastSeatingTime: '14:30', validFrom: '2026-01-01', startTime: '12:00' });
    expect(changed.body.shift.updatedAt > created.body.shift.updatedAt).toBe(true);

    const deleted = await api.delete(`${base}/shifts/${id}`);
    expect(deleted.status).toBe(204);
    expect(deleted.text).toBe('');
    expect((await api.get(`${base}/shifts/${id}`)).status).toBe(404);
    expect((await api.delete(`${base}/shifts/${id}`)).status).toBe(404);
  });

  it('accepts a shift running past midnight and lists with changedAfter and cursors', async () => {
    const { api, base } = await tenantWithClient();
    const late = await api.post(`${base}/shifts`, {
      name: 'Late',
      daysOfWeek: [5, 6],
      startTime: '21:00',
      lastSeatingTime: '00:30',
      endTime: '02:00',
    });
    expect(late.status).toBe(201);
    await createShift(api, base, lunch);
    const first = await api.get(`${base}/shifts?limit=1`);
    expect(first.body.data).toHaveLength(1);
    expect(first.body.nextCursor).toEqual(expect.any(String));
    const second = await api.get(`${base}/shifts?limit=1&cursor=${encodeURIComponent(first.body.nextCursor)}`);
    expect(second.body.data).toHaveLength(1);
    expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
    expect(second.body.nextCursor).toBeNull();

    const changed = await api.get(`${base}/shifts?changedAfter=${encodeURIComponent(late.body.shift.updatedAt)}`);
    expect(changed.body.data.map((s: { name: string }) => s.name)).toEqual(['Lunch']);
  });

  it.each<[string, object, string[]]>([
    ['a malformed start time', { ...lunch, startTime: '7:00' }, ['startTime']],
    ['an hour 24', { ...lunch, endTime: '24:00' }, ['endTime']],
    ['a malformed last seating', { ...lunch, lastSeatingTime: '14:60' }, ['lastSeatingTime']],
    ['empty days', { ...lunch, daysOfWeek: [] }, ['daysOfWeek']],
    ['a day 0', { ...lunch, daysOfWeek: [0, 1] }, ['daysOfWeek']],
    ['a day 8', { ...lunch, daysOfWeek: [8] }, ['daysOfWeek']],
    ['repeated days', { ...lunch, daysOfWeek: [1, 1] }, ['daysOfWeek']],
    ['validFrom after validTo', { ...lunch, validFrom: '2026-06-01', validTo: '2026-05-31' }, ['validFrom', 'validTo']],
    ['a malformed validFrom', { ...lunch, validFrom: '2026-13-01' }, ['validFrom']],
    ['last seating after the end', { ...lunch, lastSeatingTime: '15:30' }, ['lastSeatingTime']],
    ['last seating before the start', { ...lunch, lastSeatingTime: '11:00' }, ['lastSeatingTime']],
    ['end equal to start', { ...lunch, lastSeatingTime: '12:00', endTime: '12:00' }, ['endTime']],
    ['no name', { ...lunch, name: '' }, ['name']],
    ['an unknown field', { ...lunch, colour: 'red' }, ['colour']],
  ])('refuses %s with 400 naming the field', async (_name, body, fields) => {
    const { api, base } = await tenantWithClient();
    const res = await api.post(`${base}/shifts`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('invalid_request');
    expect(res.body.error.details.fields).toEqual(fields);
  });

  it('refuses shifts that overlap on a common day, naming startTime and endTime', async () => {
    const { api, base } = await tenantWithClient();
    const lunchId = await createShift(api, base, lunch);
    const late = await createShift(api, base, {
      name: 'Late',
      daysOfWeek: [6],
      startTime: '20:00',
      lastSeatingTime: '00:00',
      endTime: '01:30',
    });

    const overlapping = await api.post(`${base}/shifts`, {
      ...lunch,
      name: 'Brunch',
      daysOfWeek: [7],
      startTime: '11:00',
      endTime: '12:30',
      lastSeatingTime: '12:00',
    });
    expect(overlapping.status).toBe(400);
    expect(overlapping.body.error.details.fields).toEqual(['startTime', 'endTime']);

    // Past-midnight tail of Saturday's late shift against an early shift of Saturday.
    const early = await api.post(`${base}/shifts`, {
      name: 'Night',
      daysOfWeek: [6],
      startTime: '00:30',
      lastSeatingTime: '01:00',
      endTime: '03:00',
    });
    expect(early.status).toBe(400);

    // Other days, back to back, disjoint validity and inactive shifts are accepted.
    expect((await api.post(`${base}/shifts`, { ...dinner, daysOfWeek: [1, 2, 3, 4, 5, 7] })).status).toBe(201);
    expect(
      (
        await api.post(`${base}/shifts`, {
          name: 'Afternoon',
          daysOfWeek: everyDay,
          startTime: '15:00',
          lastSeatingTime: '17:00',
          endTime: '18:00',
        })
      ).status,
    ).toBe(201);
    expect((await api.patch(`${base}/shifts/${lunchId}`, { validFrom: '2021-01-01' })).status).toBe(200);
    expect((await api.post(`${base}/shifts`, { ...lunch, name: 'Old lunch', validTo: '2020-12-31' })).status).toBe(201);
    const inactive = await api.post(`${base}/shifts`, { ...lunch, name: 'Spare', validFrom: '2021-06-01', isActive: false });
    expect(inactive.status).toBe(201);

    // Switching the inactive copy on, or moving a shift onto another, is checked like a creation.
    const reactivate = await api.patch(`${base}/shifts/${inactive.body.shift.id}`, { isActive: true });
    expect(reactivate.status).toBe(400);
    expect(reactivate.body.error.details.fields).toEqual(['startTime', 'endTime']);
    const move = await api.patch(`${base}/shifts/${late}`, { daysOfWeek: [1] });
    expect(move.status).toBe(400);
  });

  it('serialises concurrent creations so that only one of two overlapping shifts is stored', async () => {
    const { api, base } = await tenantWithClient();
    const results = await Promise.all([api.post(`${base}/shifts`, lunch), api.post(`${base}/shifts`, { ...lunch, name: 'Lunch 2' })]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 400]);
    expect((await api.get(`${base}/shifts`)).body.data).toHaveLength(1);
  });

  it('removes a deleted shift from closures, and the closures of that shift alone', async () => {
    const { api, base } = await tenantWithClient();
    const lunchId = await createShift(api, base, lunch);
    const dinnerId = await createShift(api, base, dinner);
    const onlyLunch = await api.post(`${base}/closures`, { from: '2026-08-10', to: '2026-08-10', shiftIds: [lunchId] });
    const both = await api.post(`${base}/closures`, { from: '2026-08-11', to: '2026-08-11', shiftIds: [lunchId, dinnerId] });
    const wholeDay = await api.post(`${base}/closures`, { from: '2026-08-15', to: '2026-08-15' });
    await api.post(`${base}/pacing-rules`, { shiftId: lunchId, maxCovers: 20, windowMinutes: 30 });
    expect((await api.delete(`${base}/shifts/${lunchId}`)).status).toBe(204);

    const closures = (await api.get(`${base}/closures`)).body.data;
    expect(closures.map((c: { id: string }) => c.id)).toEqual([both.body.closure.id, wholeDay.body.closure.id]);
    expect(closures[0].shiftIds).toEqual([dinnerId]);
    expect(closures.some((c: { id: string }) => c.id === onlyLunch.body.closure.id)).toBe(false);
    expect((await api.get(`${base}/pacing-rules`)).body.data).toEqual([]);
  });
});

describe('closures', () => {
  it('creates, lists by date, changes and deletes closures', async () => {
    const { api, base, venueId } = await tenantWithClient();
    const lunchId = await createShift(api, base);
    const later = await api.post(`${base}/closures`, { from: '2026-12-24', to: '2026-12-26', reason: 'Christmas' });
    expect(later.status).toBe(201);
    expect(sorted(later.body.closure)).toEqual([...closureKeys].sort());
    expect(later.body.closure).toMatchObject({ venueId, from: '2026-12-24', to: '2026-12-26', shiftIds: [], reason: 'Christmas' });
    const earlier = await api.post(`${base}/closures`, { from: '2026-08-15', to: '2026-08-15', shiftIds: [lunchId] });
    expect(earlier.body.closure.reason).toBeNull();

    const list = await api.get(`${base}/closures`);
    expect(list.body.data.map((c: { from: string }) => c.from)).toEqual(['2026-08-15', '2026-12-24']);
    const page = await api.get(`${base}/closures?limit=1`);
    const next = await api.get(`${base}/closures?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(next.body.data[0].from).toBe('2026-12-24');

    const changed = await api.patch(`${base}/closures/${later.body.closure.id}`, { to: '2026-12-27', reason: null });
    expect(changed.body.closure).toMatchObject({ to: '2026-12-27', reason: null });
    expect((await api.delete(`${base}/closures/${later.body.closure.id}`)).status).toBe(204);
  });

  it.each<[string, object, string[]]>([
    ['from after to', { from: '2026-12-26', to: '2026-12-24' }, ['from', 'to']],
    ['a malformed date', { from: '26-12-2026', to: '2026-12-24' }, ['from']],
    ['a missing to', { from: '2026-12-24' }, ['to']],
    ['a malformed shift id', { from: '2026-12-24', to: '2026-12-24', shiftIds: ['nope'] }, ['shiftIds']],
    ['an unknown shift', { from: '2026-12-24', to: '2026-12-24', shiftIds: ['00000000-0000-4000-8000-000000000000'] }, ['shiftIds']],
  ])('refuses %s', async (_name, body, fields) => {
    const { api, base } = await tenantWithClient();
    const res = await api.post(`${base}/closures`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(fields);
  });

  it('refuses a shift of another venue and a change that puts from after to', async () => {
    const a = await tenantWithClient();
    const b = await tenantWithClient();
    const foreignShift = await createShift(b.api, b.base);
    const res = await a.api.post(`${a.base}/closures`, { from: '2026-12-24', to: '2026-12-24', shiftIds: [foreignShift] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['shiftIds']);

    const closure = await a.api.post(`${a.base}/closures`, { from: '2026-12-24', to: '2026-12-25' });
    const patch = await a.api.patch(`${a.base}/closures/${closure.body.closure.id}`, { from: '2026-12-31' });
    expect(patch.status).toBe(400);
    expect(patch.body.error.details.fields).toEqual(['from', 'to']);
  });
});

describe('turn-time rules', () => {
  it('creates venue-wide and shift rules with the documented shape', async () => {
    const { api, base, venueId } = await tenantWithClient();
    const lunchId = await createShift(api, base);
    const venueWide = await api.post(`${base}/turn-time-rules`, { minPartySize: 1, maxPartySize: 2, durationMinutes: 90 });
    expect(venueWide.status).toBe(201);
    expect(sorted(venueWide.body.turnTimeRule)).toEqual([...turnTimeRuleKeys].sort());
    expect(venueWide.body.turnTimeRule).toMatchObject({ venueId, shiftId: null, minPartySize: 1, maxPartySize: 2, durationMinutes: 90 });
    // The same sizes for one shift are a separate scope.
    const forLunch = await api.post(`${base}/turn-time-rules`, { shiftId: lunchId, minPartySize: 1, maxPartySize: 4, durationMinutes: 75 });
    expect(forLunch.status).toBe(201);
    expect((await api.get(`${base}/turn-time-rules`)).body.data).toHaveLength(2);
    const changed = await api.patch(`${base}/turn-time-rules/${venueWide.body.turnTimeRule.id}`, { durationMinutes: 95 });
    expect(changed.body.turnTimeRule.durationMinutes).toBe(95);
    expect((await api.delete(`${base}/turn-time-rules/${forLunch.body.turnTimeRule.id}`)).status).toBe(204);
  });

  it.each<[string, object, string[]]>([
    ['min above max', { minPartySize: 5, maxPartySize: 4, durationMinutes: 90 }, ['minPartySize', 'maxPartySize']],
    ['a party size 0', { minPartySize: 0, maxPartySize: 4, durationMinutes: 90 }, ['minPartySize']],
    ['a party size 501', { minPartySize: 1, maxPartySize: 501, durationMinutes: 90 }, ['maxPartySize']],
    ['a zero duration', { minPartySize: 1, maxPartySize: 2, durationMinutes: 0 }, ['durationMinutes']],
    ['a fractional duration', { minPartySize: 1, maxPartySize: 2, durationMinutes: 90.5 }, ['durationMinutes']],
    [
      'an unknown shift',
      { shiftId: '00000000-0000-4000-8000-000000000000', minPartySize: 1, maxPartySize: 2, durationMinutes: 90 },
      ['shiftId'],
    ],
  ])('refuses %s', async (_name, body, fields) => {
    const { api, base } = await tenantWithClient();
    const res = await api.post(`${base}/turn-time-rules`, body);
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(fields);
  });

  it('refuses overlapping party sizes in one scope', async () => {
    const { api, base } = await tenantWithClient();
    await api.post(`${base}/turn-time-rules`, { minPartySize: 1, maxPartySize: 4, durationMinutes: 90 });
    const res = await api.post(`${base}/turn-time-rules`, { minPartySize: 4, maxPartySize: 6, durationMinutes: 120 });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['minPartySize', 'maxPartySize']);
  });
});

describe('pacing rules', () => {
  it('creates and lists pacing rules exactly as docs/api.md', async () => {
    const { api, base } = await tenantWithClient();
    const dinnerId = await createShift(api, base, dinner);
    const created = await api.post(`${base}/pacing-rules`, { shiftId: dinnerId, maxCovers: 40, windowMinutes: 30 });
    expect(created.status).toBe(201);
    expect(sorted(created.body.pacingRule)).toEqual([...pacingRuleKeys].sort());
    expect(created.body.pacingRule).toMatchObject({ shiftId: dinnerId, isEnabled: true, maxCovers: 40, windowMinutes: 30 });

    const list = await api.get(`${base}/pacing-rules`);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ data: [created.body.pacingRule], nextCursor: null, livemode: true });

    const disabled = await api.patch(`${base}/pacing-rules/${created.body.pacingRule.id}`, { isEnabled: false });
    expect(disabled.body.pacingRule.isEnabled).toBe(false);
  });

  it.each<[string, (shiftId: string) => object, string[]]>([
    ['zero covers', (shiftId) => ({ shiftId, maxCovers: 0, windowMinutes: 30 }), ['maxCovers']],
    ['fractional covers', (shiftId) => ({ shiftId, maxCovers: 1.5, windowMinutes: 30 }), ['maxCovers']],
    ['a negative window', (shiftId) => ({ shiftId, maxCovers: 10, windowMinutes: -15 }), ['windowMinutes']],
    ['no shift', () => ({ maxCovers: 10, windowMinutes: 30 }), ['shiftId']],
    ['an unknown shift', () => ({ shiftId: '00000000-0000-4000-8000-000000000000', maxCovers: 10, windowMinutes: 30 }), ['shiftId']],
  ])('refuses %s', async (_name, body, fields) => {
    const { api, base } = await tenantWithClient();
    const shiftId = await createShift(api, base);
    const res = await api.post(`${base}/pacing-rules`, body(shiftId));
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(fields);
  });
});

describe('isolation and scopes', () => {
  it('answers 404 to another organisation and to a key limited to another venue', async () => {
    const owner = await tenantWithClient();
    const shiftId = await createShift(owner.api, owner.base);
    const stranger = await tenantWithClient();
    const limitedKey = await createKey(owner.organisationId, { venueIds: [stranger.venueId] });
    for (const api of [stranger.api, client(server.url, limitedKey)]) {
      for (const res of [
        await api.get(`${owner.base}/shifts`),
        await api.get(`${owner.base}/pacing-rules`),
        await api.post(`${owner.base}/shifts`, dinner),
        await api.patch(`${owner.base}/shifts/${shiftId}`, { name: 'Mine' }),
        await api.delete(`${owner.base}/shifts/${shiftId}`),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    // A rule id of one venue does not resolve under another venue of the same organisation.
    const key = await createKey(owner.organisationId);
    const other = await client(server.url, key).post('/venues', { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' });
    expect((await owner.api.get(`/venues/${other.body.venue.id}/shifts/${shiftId}`)).status).toBe(404);
  });

  it('answers 403 insufficient_scope naming the missing scope', async () => {
    const t = await tenantWithClient();
    const readOnly = client(server.url, await createKey(t.organisationId, { scopes: ['venues:read'] }));
    const write = await readOnly.post(`${t.base}/shifts`, lunch);
    expect(write.status).toBe(403);
    expect(write.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'venues:write' } });
    expect((await readOnly.get(`${t.base}/pacing-rules`)).status).toBe(200);
    const floorOnly = client(server.url, await createKey(t.organisationId, { scopes: ['floor:read'] }));
    const read = await floorOnly.get(`${t.base}/pacing-rules`);
    expect(read.status).toBe(403);
    expect(read.body.error.details.requiredScope).toBe('venues:read');
  });

  it('answers 404 to a malformed rule id', async () => {
    const { api, base } = await tenantWithClient();
    expect((await api.patch(`${base}/shifts/not-a-uuid`, { name: 'x' })).status).toBe(404);
  });
});

describe('demo venue', () => {
  it.each([24, 61])('configures shifts, turn times, pacing and a floor of %i tables', async (tableCount) => {
    const { api, base, organisationId, venueId } = await tenantWithClient();
    const setup = await configureDemoVenue(organisationId, venueId, { tableCount });
    const shifts = (await api.get(`${base}/shifts`)).body.data;
    expect(
      shifts.map((s: { startTime: string; lastSeatingTime: string; endTime: string }) => [s.startTime, s.lastSeatingTime, s.endTime]),
    ).toEqual([
      ['12:00', '14:00', '15:00'],
      ['19:00', '22:00', '23:30'],
    ]);
    const turnTimes = (await api.get(`${base}/turn-time-rules`)).body.data;
    expect(
      turnTimes.map((r: { minPartySize: number; maxPartySize: number; durationMinutes: number }) => [
        r.minPartySize,
        r.maxPartySize,
        r.durationMinutes,
      ]),
    ).toEqual([
      [1, 2, 90],
      [3, 4, 105],
      [5, 8, 120],
      [9, 16, 150],
    ]);
    expect((await api.get(`${base}/pacing-rules`)).body.data).toMatchObject([
      { shiftId: setup.shiftIds.dinner, maxCovers: 40, windowMinutes: 30, isEnabled: true },
    ]);
    const tables = (await api.get(`${base}/tables?limit=200`)).body.data;
    expect(tables).toHaveLength(tableCount);
    expect(new Set(tables.map((t: { maxSeats: number }) => t.maxSeats))).toEqual(new Set([2, 4, 6, 8]));
    expect(tables.filter((t: { combinationIds: string[] }) => t.combinationIds.length > 0).length).toBeGreaterThanOrEqual(8);
    expect((await api.get(`${base}/areas`)).body.data).toHaveLength(2);
  });
});
