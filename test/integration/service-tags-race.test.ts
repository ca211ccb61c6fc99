import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db } from '../../src/db/client.js';
import { guests, serviceTags } from '../../src/db/schema/index.js';
import { client, createTenant, useTestServer } from '../support/harness.js';
import { expectInvariantsHold } from '../support/invariants.js';

const server = useTestServer();

const rounds = 20;
const guestsPerTag = 3;

describe('service tags under concurrent renames and deletes', () => {
  it(`${rounds} rounds of rename / rename / delete (and rename / rename / guest write) never answer 500 nor leave a stale name`, async () => {
    const t = await createTenant();
    const api = client(server.url, t.key);
    let phone = 100000;
    const makeGuests = (tag: string) =>
      Promise.all(
        Array.from({ length: guestsPerTag }, async () => {
          const r = await api.post('/guests', { venueId: t.venueId, phone: `+39333${phone++}`, firstName: 'G', serviceTags: [tag] });
          expect(r.status).toBe(201);
          return r.body.guest.id as string;
        }),
      );

    for (let round = 0; round < rounds; round++) {
      const doomed = (await api.post('/service-tags', { venueId: t.venueId, name: `D${round}` })).body.serviceTag;
      const kept = (await api.post('/service-tags', { venueId: t.venueId, name: `K${round}` })).body.serviceTag;
      const [doomedGuests, keptGuests] = await Promise.all([makeGuests(doomed.name), makeGuests(kept.name)]);
      const late = await api.post('/guests', { venueId: t.venueId, phone: `+39333${phone++}`, firstName: 'Late' });

      const results = await Promise.all([
        api.patch(`/service-tags/${doomed.id}`, { name: `D${round}-a` }),
        api.patch(`/service-tags/${doomed.id}`, { name: `D${round}-b` }),
        api.delete(`/service-tags/${doomed.id}`),
        api.patch(`/service-tags/${kept.id}`, { name: `K${round}-a` }),
        api.patch(`/service-tags/${kept.id}`, { name: `K${round}-b` }),
        // A guest written with the tag's current name while it is being renamed.
        api.patch(`/guests/${late.body.guest.id}`, { serviceTags: [kept.name] }),
        // A guest carrying the tag, rewritten with it while it is renamed (lock order: tags, then guests).
        api.patch(`/guests/${keptGuests[0]}`, { serviceTags: [kept.name], notes: `round ${round}` }),
      ]);
      for (const r of results) expect([200, 204, 400, 404], r.text).toContain(r.status);
      expect(results[2].status).toBe(204);
      expect(results[3].status).toBe(200);
      expect(results[4].status).toBe(200);

      const [finalKept] = await db().select().from(serviceTags).where(eq(serviceTags.id, kept.id));
      expect(await db().select().from(serviceTags).where(eq(serviceTags.id, doomed.id))).toEqual([]);
      for (const id of doomedGuests) expect((await db().select().from(guests).where(eq(guests.id, id)))[0].serviceTags).toEqual([]);
      for (const id of keptGuests)
        expect((await db().select().from(guests).where(eq(guests.id, id)))[0].serviceTags).toEqual([finalKept.name]);
      // The late guest either got the tag (then under its final name) or was refused with 400 (the name was gone).
      const [lateRow] = await db().select().from(guests).where(eq(guests.id, late.body.guest.id));
      expect(lateRow.serviceTags).toEqual(results[5].status === 200 ? [finalKept.name] : []);
    }
    await expectInvariantsHold([t.venueId]);
  });
});
