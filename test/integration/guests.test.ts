import { and, asc, eq, isNull, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { events, guests, reservations } from '../../src/db/schema/index.js';
import { purgeTrashedGuests } from '../../src/services/guests/guest-service.js';
import { client, createKey, createTenant, useTestServer, type Client } from '../support/harness.js';

const server = useTestServer();

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body.error.code).toBe(code);
}

async function guestEvents(guestId: string) {
  const rows = await db()
    .select()
    .from(events)
    .where(and(eq(events.subjectType, 'guest'), eq(events.subjectId, guestId)))
    .orderBy(asc(events.createdAt), asc(events.id));
  return rows.map((e) => ({ type: e.type, reason: (e.data as { reason: string }).reason, guest: (e.data as { guest: any }).guest }));
}

async function newGuest(c: Client, venueId: string, body: Record<string, unknown> = {}) {
  const res = await c.post('/guests', { venueId, phone: '+39 06 1234 5678', ...body });
  expect(res.status).toBe(201);
  return res.body.guest;
}

describe('guests', () => {
  it('creates a guest with every field of docs/api.md and reads it back', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await c.post('/service-tags', { venueId: t.venueId, name: 'VIP' });
    const guest = await newGuest(c, t.venueId, {
      firstName: 'José',
      lastName: 'García',
      email: 'jose@example.com',
      allergies: 'No shellfish',
      allergens: ['crustaceans', 'nuts'],
      notes: 'Window table',
      consents: { marketingEmail: true },
      campaignTags: ['spring'],
      serviceTags: ['vip'],
      externalRef: 'crm-1',
    });
    expect(guest).toEqual({
      id: expect.any(String),
      venueId: t.venueId,
      phone: '+390612345678',
      name: 'José García',
      firstName: 'José',
      lastName: 'García',
      email: 'jose@example.com',
      allergies: 'No shellfish',
      allergens: ['crustaceans', 'nuts'],
      notes: 'Window table',
      visitCount: 0,
      noShowCount: 0,
      cancelledCount: 0,
      lastVisitAt: null,
      consents: { marketingEmail: true, marketingSms: false },
      campaignTags: ['spring'],
      serviceTags: ['VIP'],
      externalRef: 'crm-1',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: expect.any(String),
      deletedAt: null,
    });
    const read = await c.get(`/guests/${guest.id}`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual({ guest, livemode: true });
    expect(read.headers.get('etag')).toBe(`"${guest.updatedAt}"`);
  });

  it('finds the same guest from the phone in five national and international forms', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const guest = await newGuest(c, t.venueId, { phone: '06 1234 5678' });
    for (const phone of ['+39 06 1234 5678', '0039 06 12345678', '06 1234 5678', '(06) 12345678', '06-1234-5678', '+390612345678']) {
      const lookup = await c.get(`/guests/lookup?venueId=${t.venueId}&phone=${encodeURIComponent(phone)}`);
      expect(lookup.status).toBe(200);
      expect(lookup.body.found).toBe(true);
      expect(lookup.body.guest.id).toBe(guest.id);
      const list = await c.get(`/guests?venueId=${t.venueId}&phone=${encodeURIComponent(phone)}`);
      expect(list.body.data.map((g: any) => g.id)).toEqual([guest.id]);
      // Without venueId the phone is read with the country of each visible venue.
      const anyVenue = await c.get(`/guests?phone=${encodeURIComponent(phone)}`);
      expect(anyVenue.body.data.map((g: any) => g.id)).toEqual([guest.id]);
    }
    const unknown = await c.get(`/guests/lookup?venueId=${t.venueId}&phone=${encodeURIComponent('347 123 4567')}`);
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual({ found: false, phone: '+393471234567', livemode: true });
  });

  it('answers 400 with details.field "phone" for an invalid phone everywhere', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const guest = await newGuest(c, t.venueId);
    const attempts = [
      await c.post('/guests', { venueId: t.venueId, phone: '12345' }),
      await c.post('/guests', { venueId: t.venueId, phone: 'not a phone' }),
      await c.patch(`/guests/${guest.id}`, { phone: '000' }),
      await c.get(`/guests/lookup?venueId=${t.venueId}&phone=12345`),
      await c.get(`/guests?venueId=${t.venueId}&phone=12345`),
      await c.post('/guests', { venueId: t.venueId }),
    ];
    for (const res of attempts) {
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.field).toBe('phone');
      expect(res.body.error.details.fields).toEqual(['phone']);
    }
  });

  it('refuses a second live guest with the same phone or externalRef in a venue (409 conflict), not in another venue', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await newGuest(c, t.venueId, { externalRef: 'ext-1' });
    const samePhone = await c.post('/guests', { venueId: t.venueId, phone: '+390612345678' });
    expectError(samePhone, 409, 'conflict');
    expect(samePhone.body.error.details.fields).toEqual(['phone']);
    const sameRef = await c.post('/guests', { venueId: t.venueId, phone: '+39 347 123 4567', externalRef: 'ext-1' });
    expectError(sameRef, 409, 'conflict');
    const other = await c.post('/venues', { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' });
    expect((await c.post('/guests', { venueId: other.body.venue.id, phone: '+390612345678' })).status).toBe(201);
    const second = await newGuest(c, t.venueId, { phone: '+39 347 123 4567' });
    expectError(await c.patch(`/guests/${second.id}`, { phone: '06 1234 5678' }), 409, 'conflict');
  });

  it('searches name, e-mail and phone digits, case- and accent-insensitively, every word matching', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const jose = await newGuest(c, t.venueId, { firstName: 'José', lastName: 'García', email: 'pepe@example.com' });
    const maria = await newGuest(c, t.venueId, { phone: '347 123 4567', firstName: 'María', lastName: 'Gómez' });
    const ids = async (search: string) => {
      const res = await c.get(`/guests?venueId=${t.venueId}&search=${encodeURIComponent(search)}`);
      expect(res.status).toBe(200);
      return res.body.data.map((g: any) => g.id);
    };
    expect(await ids('jose')).toEqual([jose.id]);
    expect(await ids('JOSÉ garc')).toEqual([jose.id]);
    expect(await ids('jose gomez')).toEqual([]);
    expect(await ids('GOMEZ')).toEqual([maria.id]);
    expect(await ids('pepe@example')).toEqual([jose.id]);
    expect(await ids('3471234')).toEqual([maria.id]);
    expect(await ids('347 123')).toEqual([maria.id]);
    expect(await ids('0612345678')).toEqual([jose.id]);
    expect(await ids('garc')).toEqual([jose.id]);
    expect(await ids('100%')).toEqual([]);
    for (const bad of ['ab', 'x'.repeat(201), 'a b c d e f g h i']) {
      const res = await c.get(`/guests?search=${encodeURIComponent(bad)}`);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toEqual(['search']);
    }
  });

  it('finds by phone digits in a venue the same guests, in the same order, as the plain substring filter', async () => {
    // Words of 3 or more digits take the venue's digit-trigram index (migration 0032); the answers
    // must be those of `search_text LIKE '%word%'` over the venue's live guests, page by page.
    const t = await createTenant();
    const c = client(server.url, t.key);
    const other = await c.post('/venues', { name: 'Other', timezone: 'Europe/Rome', countryCode: 'IT' });
    const phones = ['+39 347 123 4567', '+39 06 1234 5678', '+39 347 000 0077', '+39 02 3470 0077', '+39 333 707 7000'];
    for (const [i, phone] of phones.entries()) {
      await newGuest(c, t.venueId, { phone, firstName: `Guest${i}`, email: i === 1 ? 'luca.3471234@example.com' : undefined });
      await newGuest(c, other.body.venue.id, { phone });
    }
    const trashed = await newGuest(c, t.venueId, { phone: '+39 347 123 9999' });
    expect((await c.delete(`/guests/${trashed.id}`)).status).toBe(204);
    const plain = async (word: string) =>
      (
        await db()
          .select({ id: guests.id })
          .from(guests)
          .where(and(eq(guests.venueId, t.venueId), isNull(guests.deletedAt), sql`${guests.searchText} like ${`%${word}%`}`))
          .orderBy(asc(guests.createdAt), asc(guests.id))
      ).map((g) => g.id);
    const searched = async (search: string, limit: number) => {
      const ids: string[] = [];
      let cursor = '';
      for (let pages = 0; pages < 10; pages++) {
        const res = await c.get(`/guests?venueId=${t.venueId}&search=${encodeURIComponent(search)}&limit=${limit}${cursor}`);
        expect(res.status).toBe(200);
        ids.push(...res.body.data.map((g: any) => g.id));
        if (!res.body.nextCursor) return ids;
        cursor = `&cursor=${encodeURIComponent(res.body.nextCursor)}`;
      }
      throw new Error('more than 10 pages');
    };
    const cases: [search: string, digits: string, count: number][] = [
      ['3471234', '3471234', 2], // a number, and an e-mail holding the digits
      ['347', '347', 4],
      ['0077', '0077', 2],
      ['077', '077', 3],
      ['390234', '390234', 1], // the E.164 digits across the country code: +39 02 3470 0077
      ['3470-0077', '34700077', 1],
      ['347-000-0', '3470000', 1],
      ['7000', '7000', 3],
      ['999', '999', 0], // only in the trashed guest
      ['12345678', '12345678', 1],
      ['555', '555', 0],
    ];
    for (const [search, digits, count] of cases) {
      const expected = await plain(digits);
      expect(expected, search).toHaveLength(count);
      expect(await searched(search, 50), search).toEqual(expected);
      expect(await searched(search, 1), search).toEqual(expected);
    }
  });

  it('filters by email and externalRef, and pages in createdAt order', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const a = await newGuest(c, t.venueId, { phone: '+39 347 000 0001', email: 'Ann@Example.com', externalRef: 'r-a' });
    const b = await newGuest(c, t.venueId, { phone: '+39 347 000 0002' });
    const d = await newGuest(c, t.venueId, { phone: '+39 347 000 0003' });
    expect((await c.get('/guests?email=ann@example.com')).body.data.map((g: any) => g.id)).toEqual([a.id]);
    expect((await c.get('/guests?externalRef=r-a')).body.data.map((g: any) => g.id)).toEqual([a.id]);
    const first = await c.get('/guests?limit=2');
    expect(first.body.data.map((g: any) => g.id)).toEqual([a.id, b.id]);
    const second = await c.get(`/guests?limit=2&cursor=${first.body.nextCursor}`);
    expect(second.body.data.map((g: any) => g.id)).toEqual([d.id]);
    expect(second.body.nextCursor).toBeNull();
    expectError(await c.get('/guests?cursor=abc.def'), 400, 'invalid_request');
  });

  it('validates allergens, serviceTags, consents and unknown fields with 400 naming them', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ allergens: ['gluten', 'chocolate'] }, 'allergens.1'],
      [{ serviceTags: ['nope'] }, 'serviceTags'],
      [{ consents: { marketingPhone: true } }, 'consents.marketingPhone'],
      [{ email: 'not-an-email' }, 'email'],
      [{ favouriteColour: 'blue' }, 'favouriteColour'],
    ];
    for (const [extra, field] of cases) {
      const res = await c.post('/guests', { venueId: t.venueId, phone: '+390612345678', ...extra });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.fields).toContain(field);
    }
  });

  it('moves a guest to the trash, hiding it from lists, search and lookup, and restores it', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const before = new Date(Date.now() - 1000).toISOString();
    const guest = await newGuest(c, t.venueId, { firstName: 'Trashy' });
    const del = await c.delete(`/guests/${guest.id}`);
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await c.get(`/guests?venueId=${t.venueId}`)).body.data).toEqual([]);
    expect((await c.get(`/guests?search=trashy`)).body.data).toEqual([]);
    expect((await c.get(`/guests/lookup?venueId=${t.venueId}&phone=0612345678`)).body.found).toBe(false);
    const changed = await c.get(`/guests?changedAfter=${encodeURIComponent(before)}`);
    expect(changed.body.data).toHaveLength(1);
    expect(changed.body.data[0].deletedAt).toEqual(expect.any(String));
    expect((await c.get(`/guests/${guest.id}`)).body.guest.deletedAt).toEqual(expect.any(String));
    expectError(await c.patch(`/guests/${guest.id}`, { notes: 'x' }), 404, 'not_found');
    expect((await c.delete(`/guests/${guest.id}`)).status).toBe(204);

    const restored = await c.post(`/guests/${guest.id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.guest.deletedAt).toBeNull();
    expect(restored.body.guest.updatedAt > guest.updatedAt).toBe(true);
    expect((await c.get(`/guests/lookup?venueId=${t.venueId}&phone=0612345678`)).body.guest.id).toBe(guest.id);
  });

  it('refuses to restore a guest whose phone another live guest now has (409)', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const guest = await newGuest(c, t.venueId);
    await c.delete(`/guests/${guest.id}`);
    await newGuest(c, t.venueId);
    expectError(await c.post(`/guests/${guest.id}/restore`), 409, 'conflict');
  });

  it('purges guests in the trash for 30 days, and only those', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const old = await newGuest(c, t.venueId, { phone: '+39 347 000 0011' });
    const recent = await newGuest(c, t.venueId, { phone: '+39 347 000 0012' });
    const live = await newGuest(c, t.venueId, { phone: '+39 347 000 0013' });
    await c.delete(`/guests/${old.id}`);
    await c.delete(`/guests/${recent.id}`);
    await db()
      .update(guests)
      .set({ deletedAt: new Date(Date.now() - 31 * 86_400_000) })
      .where(eq(guests.id, old.id));
    const [booking] = await db()
      .insert(reservations)
      .values({
        organisationId: t.organisationId,
        venueId: t.venueId,
        serviceDate: '2024-01-10',
        time: '20:00',
        startsAt: new Date('2024-01-10T19:00:00Z'),
        endsAt: new Date('2024-01-10T21:00:00Z'),
        partySize: 2,
        status: 'completed',
        source: 'api',
        guestId: old.id,
      })
      .returning();
    expectError(await c.post(`/guests/${old.id}/restore`), 404, 'not_found');
    expect(await purgeTrashedGuests()).toBeGreaterThanOrEqual(1);
    expectError(await c.get(`/guests/${old.id}`), 404, 'not_found');
    // The reservation stays, without its guest.
    const [kept] = await db().select().from(reservations).where(eq(reservations.id, booking.id));
    expect(kept.guestId).toBeNull();
    expect((await c.get(`/guests/${recent.id}`)).status).toBe(200);
    expect((await c.get(`/guests/${live.id}`)).status).toBe(200);
  });

  it('emits guest_profile_changed with reasons guest_created, profile_changed and service_tags_changed', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    await c.post('/service-tags', { venueId: t.venueId, name: 'Regular' });
    const guest = await newGuest(c, t.venueId, { firstName: 'Eve' });
    await c.patch(`/guests/${guest.id}`, { notes: 'Likes the terrace' });
    await c.patch(`/guests/${guest.id}`, { serviceTags: ['Regular'] });
    await c.patch(`/guests/${guest.id}`, { serviceTags: ['Regular'], notes: 'Likes the terrace' }); // no change: no event
    await c.patch(`/guests/${guest.id}`, { serviceTags: [], lastName: 'Adams' });
    const emitted = await guestEvents(guest.id);
    expect(emitted.every((e) => e.type === 'guest_profile_changed')).toBe(true);
    expect(emitted.slice(0, 3).map((e) => e.reason)).toEqual(['guest_created', 'profile_changed', 'service_tags_changed']);
    expect(emitted[2].guest.serviceTags).toEqual(['Regular']);
    // The last PATCH changed both: two events of one transaction (same createdAt), both with the final guest.
    expect(
      emitted
        .slice(3)
        .map((e) => e.reason)
        .sort(),
    ).toEqual(['profile_changed', 'service_tags_changed']);
    for (const e of emitted.slice(3)) expect(e.guest).toMatchObject({ lastName: 'Adams', serviceTags: [] });
    const [row] = await db().select().from(events).where(eq(events.subjectId, guest.id)).limit(1);
    expect(row).toMatchObject({ venueId: t.venueId, organisationId: t.organisationId, livemode: true, subjectType: 'guest' });
  });

  it('keeps guests to their organisation and visible venues, and needs the guests scopes', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const guest = await newGuest(c, t.venueId);
    const other = await createTenant();
    const o = client(server.url, other.key);
    expectError(await o.get(`/guests/${guest.id}`), 404, 'not_found');
    expectError(await o.patch(`/guests/${guest.id}`, { notes: 'x' }), 404, 'not_found');
    expectError(await o.delete(`/guests/${guest.id}`), 404, 'not_found');
    expectError(await o.get(`/guests/lookup?venueId=${t.venueId}&phone=0612345678`), 404, 'not_found');
    expectError(await o.post('/guests', { venueId: t.venueId, phone: '0612345678' }), 404, 'not_found');
    expect((await o.get('/guests')).body.data).toEqual([]);

    const secondVenue = (await c.post('/venues', { name: 'Second', timezone: 'Europe/Rome', countryCode: 'IT' })).body.venue.id;
    const limited = client(server.url, await createKey(t.organisationId, { venueIds: [secondVenue] }));
    expectError(await limited.get(`/guests/${guest.id}`), 404, 'not_found');
    expectError(await limited.get(`/guests?venueId=${t.venueId}`), 404, 'not_found');
    expect((await limited.get('/guests')).body.data).toEqual([]);

    const readOnly = client(server.url, await createKey(t.organisationId, { scopes: ['guests:read'] }));
    expect((await readOnly.get(`/guests/${guest.id}`)).status).toBe(200);
    const denied = await readOnly.patch(`/guests/${guest.id}`, { notes: 'x' });
    expectError(denied, 403, 'insufficient_scope');
    expect(denied.body.error.details.requiredScope).toBe('guests:write');
    const noGuests = client(server.url, await createKey(t.organisationId, { scopes: ['reservations:read'] }));
    expectError(await noGuests.get('/guests'), 403, 'insufficient_scope');
    expectError(await noGuests.get('/service-tags'), 403, 'insufficient_scope');

    const widget = client(server.url, await createKey(t.organisationId, { kind: 'publishable', allowedOrigins: ['https://shop.example'] }));
    const res = await widget.get('/guests', { origin: 'https://shop.example' });
    expectError(res, 403, 'forbidden');
    expect(res.body.error.details.reason).toBe('publishable_key');
  });
});

describe('service tags', () => {
  it('creates, lists, renames and deletes tags, keeping guests in step', async () => {
    const t = await createTenant();
    const c = client(server.url, t.key);
    const created = await c.post('/service-tags', { venueId: t.venueId, name: 'VIP' });
    expect(created.status).toBe(201);
    expect(created.body.serviceTag).toEqual({ id: expect.any(String), name: 'VIP', updatedAt: expect.any(String) });
    expectError(await c.post('/service-tags', { venueId: t.venueId, name: 'vip' }), 409, 'conflict');
    const other = await c.post('/service-tags', { venueId: t.venueId, name: 'Regular' });
    const list = await c.get(`/service-tags?venueId=${t.venueId}`);
    expect(list.body.data.map((s: any) => s.name)).toEqual(['VIP', 'Regular']);

    const guest = await newGuest(c, t.venueId, { serviceTags: ['VIP', 'Regular'] });
    const renamed = await c.patch(`/service-tags/${created.body.serviceTag.id}`, { name: 'Very important' });
    expect(renamed.body.serviceTag.name).toBe('Very important');
    expect((await c.get(`/guests/${guest.id}`)).body.guest.serviceTags).toEqual(['Very important', 'Regular']);
    expectError(await c.patch(`/service-tags/${created.body.serviceTag.id}`, { name: 'regular' }), 409, 'conflict');

    expect((await c.delete(`/service-tags/${other.body.serviceTag.id}`)).status).toBe(204);
    expect((await c.get(`/guests/${guest.id}`)).body.guest.serviceTags).toEqual(['Very important']);
    expectError(await c.get(`/service-tags/${other.body.serviceTag.id}`), 404, 'not_found');

    const stranger = client(server.url, (await createTenant()).key);
    expectError(await stranger.patch(`/service-tags/${created.body.serviceTag.id}`, { name: 'x' }), 404, 'not_found');
    expect((await stranger.get('/service-tags')).body.data).toEqual([]);
  });
});
