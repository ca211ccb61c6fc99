import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';

const server = useTestServer();

const planKeys = ['id', 'name', 'isActive', 'version', 'updatedAt', 'areas', 'tables', 'combinations'].sort();
const planAreaKeys = ['id', 'name', 'widthCm', 'heightCm'].sort();
const planTableKeys = [
  'id',
  'areaId',
  'name',
  'shape',
  'minSeats',
  'maxSeats',
  'positionXCm',
  'positionYCm',
  'widthCm',
  'heightCm',
  'rotationDegrees',
  'isBlocked',
].sort();
const tableListKeys = [
  'id',
  'floorPlanId',
  'areaId',
  'name',
  'shape',
  'minSeats',
  'maxSeats',
  'isBlocked',
  'combinationIds',
  'updatedAt',
].sort();
const areaListKeys = ['id', 'name', 'icon', 'position', 'widthCm', 'heightCm', 'updatedAt'].sort();
const sorted = (o: object) => Object.keys(o).sort();

/** A plan body with client-chosen ids: a dining room (T1, T2, T10) and a terrace (P1, P2), T1+T2 combined. */
function planBody(name = 'Main') {
  const ids = {
    dining: randomUUID(),
    terrace: randomUUID(),
    t1: randomUUID(),
    t2: randomUUID(),
    t10: randomUUID(),
    p1: randomUUID(),
    p2: randomUUID(),
    combo: randomUUID(),
  };
  const body = {
    name,
    areas: [
      { id: ids.terrace, name: 'Terrace', icon: 'sun', position: 1, widthCm: 800, heightCm: 600 },
      { id: ids.dining, name: 'Dining room', position: 0, widthCm: 1200, heightCm: 900 },
    ],
    tables: [
      { id: ids.p2, areaId: ids.terrace, name: 'P2', minSeats: 2, maxSeats: 4 },
      { id: ids.t10, areaId: ids.dining, name: 'T10', minSeats: 4, maxSeats: 6, positionXCm: 300, positionYCm: 120, rotationDegrees: 90 },
      { id: ids.t2, areaId: ids.dining, name: 'T2', minSeats: 1, maxSeats: 2 },
      { id: ids.t1, areaId: ids.dining, name: 'T1', minSeats: 2, maxSeats: 4, widthCm: 120, heightCm: 80 },
      { id: ids.p1, areaId: ids.terrace, name: 'P1', minSeats: 2, maxSeats: 2 },
    ],
    combinations: [{ id: ids.combo, tableIds: [ids.t1, ids.t2] }],
  };
  return { ids, body };
}

async function tenantWithPlan() {
  const t = await createTenant();
  const api = client(server.url, t.key);
  const base = `/venues/${t.venueId}`;
  const { ids, body } = planBody();
  const created = await api.post(`${base}/floor-plans`, body);
  expect(created.status).toBe(201);
  return { ...t, api, base, ids, body, plan: created.body.floorPlan };
}

async function getPlan(api: Client, base: string, planId: string) {
  const res = await api.get(`${base}/floor-plans/${planId}`);
  expect(res.status).toBe(200);
  return res.body.floorPlan;
}

describe('floor plans', () => {
  it('creates the first plan active, with exactly the shape of docs/api.md and the client ids', async () => {
    const { plan, ids } = await tenantWithPlan();
    expect(sorted(plan)).toEqual(planKeys);
    expect(plan).toMatchObject({ name: 'Main', isActive: true, version: 1 });
    for (const area of plan.areas) expect(sorted(area)).toEqual(planAreaKeys);
    for (const table of plan.tables) expect(sorted(table)).toEqual(planTableKeys);
    for (const combination of plan.combinations) expect(sorted(combination)).toEqual(['id', 'tableIds']);
    expect(plan.areas.map((a: { id: string }) => a.id)).toEqual([ids.dining, ids.terrace]);
    // Area position, then table name.
    expect(plan.tables.map((t: { name: string }) => t.name)).toEqual(['T1', 'T10', 'T2', 'P1', 'P2']);
    expect(plan.tables[0]).toEqual({
      id: ids.t1,
      areaId: ids.dining,
      name: 'T1',
      shape: 'square',
      minSeats: 2,
      maxSeats: 4,
      positionXCm: 0,
      positionYCm: 0,
      widthCm: 120,
      heightCm: 80,
      rotationDegrees: 0,
      isBlocked: false,
    });
    expect(plan.combinations).toEqual([{ id: ids.combo, tableIds: [ids.t1, ids.t2] }]);
  });

  it('reads a plan with its ETag, lists plans, and creates later plans inactive', async () => {
    const { api, base, plan } = await tenantWithPlan();
    const read = await api.get(`${base}/floor-plans/${plan.id}`);
    expect(read.body).toEqual({ floorPlan: plan, livemode: true });
    expect(read.headers.get('etag')).toBe(`"${plan.updatedAt}"`);

    const second = await api.post(`${base}/floor-plans`, { name: 'Summer' });
    expect(second.status).toBe(201);
    expect(second.body.floorPlan).toMatchObject({ name: 'Summer', isActive: false, version: 1, areas: [], tables: [], combinations: [] });

    const list = await api.get(`${base}/floor-plans`);
    expect(list.body.data.map((p: { id: string }) => p.id)).toEqual([plan.id, second.body.floorPlan.id]);
    expect(list.body.data[0]).toEqual(plan);
    const page = await api.get(`${base}/floor-plans?limit=1`);
    const rest = await api.get(`${base}/floor-plans?limit=1&cursor=${encodeURIComponent(page.body.nextCursor)}`);
    expect(rest.body.data.map((p: { id: string }) => p.id)).toEqual([second.body.floorPlan.id]);
  });

  it('gives fresh ids to items copied from another plan', async () => {
    const { api, base, body, ids } = await tenantWithPlan();
    const copy = await api.post(`${base}/floor-plans`, { ...body, name: 'Copy' });
    expect(copy.status).toBe(201);
    const plan = copy.body.floorPlan;
    expect(plan.tables).toHaveLength(5);
    const originalIds = new Set<string>(Object.values(ids));
    const copiedIds: string[] = [...plan.areas, ...plan.tables, ...plan.combinations].map((i: { id: string }) => i.id);
    expect(copiedIds.some((id) => originalIds.has(id))).toBe(false);
    // References follow the new ids.
    const t1 = plan.tables.find((t: { name: string }) => t.name === 'T1');
    const t2 = plan.tables.find((t: { name: string }) => t.name === 'T2');
    expect(plan.combinations[0].tableIds).toEqual([t1.id, t2.id]);
    expect(plan.areas.map((a: { id: string }) => a.id)).toContain(t1.areaId);
  });
});

describe('replacing a plan', () => {
  it('keeps ids, adds new items referring to each other, soft-deletes the rest and increments the version', async () => {
    const { api, base, plan, ids, body } = await tenantWithPlan();
    const bar = randomUUID();
    const b1 = randomUUID();
    const b2 = randomUUID();
    const res = await api.put(`${base}/floor-plans/${plan.id}`, {
      areas: [...body.areas.filter((a) => a.id !== ids.terrace), { id: bar, name: 'Bar', widthCm: 400, heightCm: 300 }],
      tables: [
        ...body.tables.filter((t) => t.areaId === ids.dining).map((t) => (t.id === ids.t10 ? { ...t, maxSeats: 8 } : t)),
        { id: b1, areaId: bar, name: 'B1', minSeats: 1, maxSeats: 2 },
        { id: b2, areaId: bar, name: 'B2', minSeats: 1, maxSeats: 2 },
      ],
      combinations: [...body.combinations, { tableIds: [b1, b2] }],
    });
    expect(res.status).toBe(200);
    const replaced = res.body.floorPlan;
    expect(replaced).toMatchObject({ id: plan.id, name: 'Main', version: 2, isActive: true });
    expect(replaced.updatedAt > plan.updatedAt).toBe(true);
    expect(replaced.areas.map((a: { id: string }) => a.id)).toEqual([ids.dining, bar]);
    expect(replaced.tables.map((t: { id: string }) => t.id)).toEqual([ids.t1, ids.t10, ids.t2, b1, b2]);
    expect(replaced.tables[1].maxSeats).toBe(8);
    expect(replaced.combinations[0]).toEqual({ id: ids.combo, tableIds: [ids.t1, ids.t2] });
    expect(replaced.combinations[1].tableIds).toEqual([b1, b2]);
    expect(await getPlan(api, base, plan.id)).toEqual(replaced);

    const tables = (await api.get(`${base}/tables`)).body.data;
    expect(tables.map((t: { name: string }) => t.name)).toEqual(['T1', 'T10', 'T2', 'B1', 'B2']);
    const areas = (await api.get(`${base}/areas`)).body.data;
    expect(areas.map((a: { name: string }) => a.name)).toEqual(['Dining room', 'Bar']);

    // A removed table is gone from the floor; its row stays for past reservations.
    expect((await api.patch(`${base}/tables/${ids.p1}`, { isBlocked: true })).status).toBe(404);

    // Giving a removed item back revives it with its id.
    const revived = await api.put(`${base}/floor-plans/${plan.id}`, body);
    expect(revived.body.floorPlan.version).toBe(3);
    expect(revived.body.floorPlan.tables.map((t: { id: string }) => t.id).sort()).toEqual(
      plan.tables.map((t: { id: string }) => t.id).sort(),
    );
  });

  it('honours If-Match: the current version or ETag passes, a stale one is a 409 version_mismatch', async () => {
    const { api, base, plan, body } = await tenantWithPlan();
    const ok = await api.put(`${base}/floor-plans/${plan.id}`, { ...body, name: 'Renamed' }, { 'If-Match': '1' });
    expect(ok.status).toBe(200);
    expect(ok.body.floorPlan).toMatchObject({ name: 'Renamed', version: 2 });

    const stale = await api.put(`${base}/floor-plans/${plan.id}`, body, { 'If-Match': '"1"' });
    expect(stale.status).toBe(409);
    expect(stale.body.error).toMatchObject({ code: 'conflict', details: { reason: 'version_mismatch' } });
    expect((await getPlan(api, base, plan.id)).version).toBe(2);

    const byEtag = await api.put(`${base}/floor-plans/${plan.id}`, body, { 'If-Match': `"${ok.body.floorPlan.updatedAt}"` });
    expect(byEtag.status).toBe(200);
    const staleEtag = await api.put(`${base}/floor-plans/${plan.id}`, body, { 'If-Match': `"${ok.body.floorPlan.updatedAt}"` });
    expect(staleEtag.status).toBe(409);

    const malformed = await api.put(`${base}/floor-plans/${plan.id}`, body, { 'If-Match': 'yesterday' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.details.fields).toEqual(['If-Match']);
  });

  it.each<[string, (p: ReturnType<typeof planBody>) => object, string[]]>([
    [
      'a combination of one table',
      ({ body, ids }) => ({ ...body, combinations: [{ tableIds: [ids.t1] }] }),
      ['combinations', 'combinations.0.tableIds'],
    ],
    [
      'a table twice in a combination',
      ({ body, ids }) => ({ ...body, combinations: [{ tableIds: [ids.t1, ids.t1] }] }),
      ['combinations', 'combinations.0.tableIds'],
    ],
    [
      'tables of two areas',
      ({ body, ids }) => ({ ...body, combinations: [{ tableIds: [ids.t1, ids.p1] }] }),
      ['combinations', 'combinations.0.tableIds'],
    ],
    [
      'a table not in the plan',
      ({ body, ids }) => ({ ...body, combinations: [{ tableIds: [ids.t1, randomUUID()] }] }),
      ['combinations', 'combinations.0.tableIds'],
    ],
    [
      'the same tables twice',
      ({ body, ids }) => ({ ...body, combinations: [{ tableIds: [ids.t1, ids.t2] }, { tableIds: [ids.t2, ids.t1] }] }),
      ['combinations', 'combinations.1.tableIds'],
    ],
    [
      'a malformed table id in a combination',
      ({ body }) => ({ ...body, combinations: [{ tableIds: ['T1', 'T2'] }] }),
      ['combinations.0.tableIds'],
    ],
    [
      'minSeats above maxSeats',
      ({ body }) => ({ ...body, tables: body.tables.map((t, i) => (i === 1 ? { ...t, minSeats: 7 } : t)) }),
      ['tables.1.minSeats', 'tables.1.maxSeats'],
    ],
    [
      'zero seats',
      ({ body }) => ({ ...body, tables: body.tables.map((t, i) => (i === 0 ? { ...t, minSeats: 0 } : t)) }),
      ['tables.0.minSeats'],
    ],
    [
      'an area that is not in the body',
      ({ body }) => ({ ...body, tables: body.tables.map((t, i) => (i === 0 ? { ...t, areaId: randomUUID() } : t)) }),
      ['tables', 'tables.0.areaId'],
    ],
    [
      'an unknown table field',
      ({ body }) => ({ ...body, tables: body.tables.map((t, i) => (i === 0 ? { ...t, colour: 'red' } : t)) }),
      ['tables.0.colour'],
    ],
    ['a repeated area id', ({ body }) => ({ ...body, areas: [...body.areas, body.areas[0]] }), ['areas']],
    [
      'an area without size',
      ({ body }) => ({ ...body, areas: [{ ...body.areas[0], widthCm: undefined }, body.areas[1]] }),
      ['areas.0.widthCm'],
    ],
    [
      'a rotation of 360',
      ({ body }) => ({ ...body, tables: body.tables.map((t, i) => (i === 0 ? { ...t, rotationDegrees: 360 } : t)) }),
      ['tables.0.rotationDegrees'],
    ],
  ])('refuses %s with 400 naming the field, on create and on replace', async (_name, mutate, fields) => {
    const { api, base, plan } = await tenantWithPlan();
    const invalid = mutate(planBody());
    const created = await api.post(`${base}/floor-plans`, invalid);
    expect(created.status).toBe(400);
    expect(created.body.error.code).toBe('invalid_request');
    expect(created.body.error.details.fields).toEqual(fields);
    const replaced = await api.put(`${base}/floor-plans/${plan.id}`, invalid);
    expect(replaced.status).toBe(400);
    expect(replaced.body.error.details.fields).toEqual(fields);
    expect((await getPlan(api, base, plan.id)).version).toBe(1);
  });

  it('refuses a plan without a name', async () => {
    const t = await createTenant();
    const res = await client(server.url, t.key).post(`/venues/${t.venueId}/floor-plans`, { areas: [] });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields).toEqual(['name']);
  });
});

describe('activation', () => {
  it('switches the active plan, increments both versions and shows the new plan in the lists', async () => {
    const { api, base, plan } = await tenantWithPlan();
    const { body } = planBody('Summer');
    const summer = (await api.post(`${base}/floor-plans`, body)).body.floorPlan;
    const before = await api.get(`${base}/tables`);

    const res = await api.post(`${base}/floor-plans/${summer.id}/activate`);
    expect(res.status).toBe(200);
    expect(sorted(res.body.floorPlan)).toEqual(planKeys);
    expect(res.body.floorPlan).toMatchObject({ id: summer.id, isActive: true, version: 2 });
    expect(await getPlan(api, base, plan.id)).toMatchObject({ isActive: false, version: 2 });

    const tables = (await api.get(`${base}/tables`)).body.data;
    expect(tables.every((t: { floorPlanId: string }) => t.floorPlanId === summer.id)).toBe(true);
    expect(tables.map((t: { id: string }) => t.id)).not.toEqual(before.body.data.map((t: { id: string }) => t.id));
    // The tables the list now shows count as changed.
    const changed = await api.get(`${base}/tables?changedAfter=${encodeURIComponent(before.body.data[0].updatedAt)}`);
    expect(changed.body.data).toHaveLength(5);

    // Activating the active plan changes nothing.
    const again = await api.post(`${base}/floor-plans/${summer.id}/activate`);
    expect(again.body.floorPlan.version).toBe(2);
  });

  it('keeps exactly one active plan when activations race', async () => {
    const { api, base, plan } = await tenantWithPlan();
    const others = [];
    for (const name of ['B', 'C', 'D']) others.push((await api.post(`${base}/floor-plans`, planBody(name).body)).body.floorPlan);
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all([plan, ...others].map((p) => api.post(`${base}/floor-plans/${p.id}/activate`)));
      expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const plans = (await api.get(`${base}/floor-plans`)).body.data;
      expect(plans.filter((p: { isActive: boolean }) => p.isActive)).toHaveLength(1);
      const active = plans.find((p: { isActive: boolean }) => p.isActive);
      const tables = (await api.get(`${base}/tables`)).body.data;
      expect(new Set(tables.map((t: { floorPlanId: string }) => t.floorPlanId))).toEqual(new Set([active.id]));
    }
  });
});

describe('tables and areas of the active plan', () => {
  it('lists tables with exactly the Table shape, combinationIds, natural order and pagination', async () => {
    const { api, base, plan, ids } = await tenantWithPlan();
    const res = await api.get(`${base}/tables`);
    expect(res.status).toBe(200);
    expect(res.body.nextCursor).toBeNull();
    for (const t of res.body.data) expect(sorted(t)).toEqual(tableListKeys);
    expect(res.body.data.map((t: { name: string }) => t.name)).toEqual(['T1', 'T10', 'T2', 'P1', 'P2']);
    expect(res.body.data[0]).toMatchObject({
      id: ids.t1,
      floorPlanId: plan.id,
      areaId: ids.dining,
      shape: 'square',
      combinationIds: [ids.combo],
    });
    expect(res.body.data[1].combinationIds).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { name: string }[]; nextCursor: string | null } } = await api.get(
        `${base}/tables?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.data.map((t) => t.name));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(['T1', 'T10', 'T2', 'P1', 'P2']);

    expect((await api.get(`${base}/tables?limit=0`)).status).toBe(400);
    const tampered = await api.get(`${base}/tables?cursor=abc.def`);
    expect(tampered.status).toBe(400);
    expect(tampered.body.error.details.fields).toEqual(['cursor']);
  });

  it('lists areas with exactly the Area shape, by position then name', async () => {
    const { api, base, ids } = await tenantWithPlan();
    const res = await api.get(`${base}/areas`);
    expect(res.status).toBe(200);
    for (const a of res.body.data) expect(sorted(a)).toEqual(areaListKeys);
    expect(res.body.data.map((a: { id: string }) => a.id)).toEqual([ids.dining, ids.terrace]);
    expect(res.body.data[0]).toMatchObject({ name: 'Dining room', icon: 'room', position: 0, widthCm: 1200, heightCm: 900 });
    expect(res.body.data[1]).toMatchObject({ icon: 'sun', position: 1 });
  });

  it('answers empty lists for a venue without a plan', async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    expect((await api.get(`/venues/${t.venueId}/tables`)).body).toEqual({ data: [], nextCursor: null, livemode: true });
    expect((await api.get(`/venues/${t.venueId}/areas`)).body).toEqual({ data: [], nextCursor: null, livemode: true });
  });

  it('blocks and unblocks a table, moving the plan version only on a real change', async () => {
    const { api, base, plan, ids } = await tenantWithPlan();
    const lastChange = (await api.get(`${base}/tables`)).body.data
      .map((t: { updatedAt: string }) => t.updatedAt)
      .sort()
      .at(-1);
    const blocked = await api.patch(`${base}/tables/${ids.t1}`, { isBlocked: true });
    expect(blocked.status).toBe(200);
    expect(sorted(blocked.body.table)).toEqual(tableListKeys);
    expect(blocked.body.table).toMatchObject({ id: ids.t1, isBlocked: true, combinationIds: [ids.combo] });
    expect((await getPlan(api, base, plan.id)).version).toBe(2);

    expect((await api.patch(`${base}/tables/${ids.t1}`, { isBlocked: true })).status).toBe(200);
    expect((await getPlan(api, base, plan.id)).version).toBe(2);

    const listed = (await api.get(`${base}/tables`)).body.data.find((t: { id: string }) => t.id === ids.t1);
    expect(listed).toEqual(blocked.body.table);
    const changed = await api.get(`${base}/tables?changedAfter=${encodeURIComponent(lastChange)}`);
    expect(changed.body.data.map((t: { id: string }) => t.id)).toEqual([ids.t1]);

    const unblocked = await api.patch(`${base}/tables/${ids.t1}`, { isBlocked: false });
    expect(unblocked.body.table.isBlocked).toBe(false);
    expect((await getPlan(api, base, plan.id)).version).toBe(3);

    // A PUT that leaves isBlocked out keeps it.
    await api.patch(`${base}/tables/${ids.p1}`, { isBlocked: true });
    const body = await getPlan(api, base, plan.id);
    const kept = await api.put(`${base}/floor-plans/${plan.id}`, {
      areas: body.areas,
      tables: body.tables.map(({ isBlocked: _ignored, ...t }: { isBlocked: boolean }) => t),
      combinations: body.combinations,
    });
    expect(kept.body.floorPlan.tables.find((t: { id: string }) => t.id === ids.p1).isBlocked).toBe(true);

    for (const bad of [{}, { isBlocked: 'yes' }, { isBlocked: true, name: 'x' }]) {
      const res = await api.patch(`${base}/tables/${ids.t1}`, bad);
      expect(res.status).toBe(400);
    }
    expect((await api.patch(`${base}/tables/${randomUUID()}`, { isBlocked: true })).status).toBe(404);
  });
});

describe('isolation and scopes', () => {
  it('answers 404 to another organisation and to a key limited to another venue', async () => {
    const owner = await tenantWithPlan();
    const stranger = await createTenant();
    const limited = await createKey(owner.organisationId, { venueIds: [stranger.venueId] });
    const { body } = planBody();
    for (const api of [client(server.url, stranger.key), client(server.url, limited)]) {
      for (const res of [
        await api.get(`${owner.base}/floor-plans`),
        await api.get(`${owner.base}/floor-plans/${owner.plan.id}`),
        await api.post(`${owner.base}/floor-plans`, body),
        await api.put(`${owner.base}/floor-plans/${owner.plan.id}`, body),
        await api.post(`${owner.base}/floor-plans/${owner.plan.id}/activate`),
        await api.get(`${owner.base}/tables`),
        await api.get(`${owner.base}/areas`),
        await api.patch(`${owner.base}/tables/${owner.ids.t1}`, { isBlocked: true }),
      ]) {
        expect(res.status).toBe(404);
        expect(res.body.error.code).toBe('not_found');
      }
    }
    // A plan or table id does not resolve under another venue of the same organisation.
    const second = await owner.api.post('/venues', { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' });
    const otherBase = `/venues/${second.body.venue.id}`;
    expect((await owner.api.get(`${otherBase}/floor-plans/${owner.plan.id}`)).status).toBe(404);
    expect((await owner.api.post(`${otherBase}/floor-plans/${owner.plan.id}/activate`)).status).toBe(404);
    expect((await owner.api.patch(`${otherBase}/tables/${owner.ids.t1}`, { isBlocked: true })).status).toBe(404);
    expect((await getPlan(owner.api, owner.base, owner.plan.id)).version).toBe(1);
  });

  it('answers 403 insufficient_scope naming floor:read or floor:write', async () => {
    const t = await tenantWithPlan();
    const reader = client(server.url, await createKey(t.organisationId, { scopes: ['floor:read'] }));
    expect((await reader.get(`${t.base}/tables`)).status).toBe(200);
    for (const res of [
      await reader.post(`${t.base}/floor-plans`, planBody().body),
      await reader.put(`${t.base}/floor-plans/${t.plan.id}`, t.body),
      await reader.post(`${t.base}/floor-plans/${t.plan.id}/activate`),
      await reader.patch(`${t.base}/tables/${t.ids.t1}`, { isBlocked: true }),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error).toMatchObject({ code: 'insufficient_scope', details: { requiredScope: 'floor:write' } });
    }
    const venuesOnly = client(server.url, await createKey(t.organisationId, { scopes: ['venues:read', 'venues:write'] }));
    for (const path of ['/tables', '/areas', '/floor-plans', `/floor-plans/${t.plan.id}`]) {
      const res = await venuesOnly.get(`${t.base}${path}`);
      expect(res.status).toBe(403);
      expect(res.body.error.details.requiredScope).toBe('floor:read');
    }
  });

  it('answers 404 to malformed ids and 405 to unsupported methods', async () => {
    const { api, base } = await tenantWithPlan();
    expect((await api.get(`${base}/floor-plans/nope`)).status).toBe(404);
    expect((await api.patch(`${base}/tables/nope`, { isBlocked: true })).status).toBe(404);
    expect((await api.delete(`${base}/tables`)).status).toBe(405);
  });
});
