import { eq, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, savepoint, transaction } from '../../src/db/client.js';
import { insertRows } from '../../src/db/insert-rows.js';
import { events, guests } from '../../src/db/schema/index.js';
import { newId } from '../../src/lib/uuid-v7.js';
import { createTenant } from '../support/harness.js';

/**
 * insertRows sends a statement of its own text (runSql, src/db/client.ts) on the hot write
 * path: it must run in the transaction or savepoint it is given, prepared, and return what drizzle itself would.
 * (runSql's statements take the same way: run-sql.test.ts.)
 */
async function historyEvent(overrides: Partial<typeof events.$inferInsert> = {}): Promise<typeof events.$inferInsert> {
  const t = await createTenant();
  // A history-only event: never dispatched or streamed, so nothing else touches it.
  return {
    organisationId: t.organisationId,
    venueId: t.venueId,
    type: 'reservation_created',
    subjectType: 'reservation',
    subjectId: newId(),
    data: { reservation: { partySize: 2, tags: ['vip', 'window'] }, note: 'ü "quoted"' },
    livemode: true,
    actor: { kind: 'system', name: 'test' },
    published: false,
    dispatchedAt: new Date('2026-11-25T10:00:00.123Z'),
    ...overrides,
  };
}

const readBack = async (id: string) => db().select().from(events).where(eq(events.id, id));

describe('insertRows', () => {
  it('inserts the row and return it as drizzle reads it back, the id from its default function', async () => {
    const [row] = await insertRows(db(), events, [await historyEvent()]);
    expect(row.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(row.createdAt).toBeInstanceOf(Date);
    expect(await readBack(row.id)).toEqual([row]);
  });

  it('leaves out a row a constraint refused with onConflictDoNothing', async () => {
    const values = await historyEvent({ id: newId() });
    expect(await insertRows(db(), events, [values], { onConflictDoNothing: true })).toHaveLength(1);
    expect(await insertRows(db(), events, [values], { onConflictDoNothing: true })).toEqual([]);
  });

  it('runs in the transaction they are given: rolled back with it', async () => {
    const values = await historyEvent({ id: newId() });
    await expect(
      transaction(async (tx) => {
        await insertRows(tx, events, [values]);
        // Seen inside the transaction by drizzle's own statements on it.
        expect(await tx.select().from(events).where(eq(events.id, values.id!))).toHaveLength(1);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await readBack(values.id!)).toEqual([]);
  });

  it("returns in a transaction what it returns on the pool, as a statement prepared on the transaction's connection", async () => {
    const values = await historyEvent({ id: newId() });
    const { inserted, prepared } = await transaction(async (tx) => {
      // Returning columns no other insert of this file returns: a text of its own on the connection.
      const inserted = await insertRows(tx, events, [values], { returning: ['id', 'type', 'data'] });
      const prepared = await tx.execute<{ n: number }>(
        sql`select count(*)::int as n from pg_prepared_statements where statement like 'insert into "events" % returning "id", "type", "data"'`,
      );
      return { inserted, prepared: prepared[0].n };
    });
    const [stored] = await readBack(values.id!);
    expect(inserted).toEqual([{ id: stored.id, type: stored.type, data: stored.data }]);
    expect(prepared).toBe(1);
  });

  it('decodes in a transaction what drizzle reads back: arrays, JSON, instants, nulls', async () => {
    const t = await createTenant();
    const id = newId();
    const values: typeof guests.$inferInsert = {
      id,
      organisationId: t.organisationId,
      venueId: t.venueId,
      phone: '+393330000001',
      phoneNational: '3330000001',
      firstName: 'Ada',
      lastName: 'Lovelace "quoted"',
      email: null,
      allergens: ['gluten', 'peanuts'],
      campaignTags: [],
      consents: { marketingEmail: true, marketingSms: false },
      lastVisitAt: new Date('2026-11-25T10:00:00.123Z'),
      visitCount: 3,
    };
    const inserted = await transaction((tx) => insertRows(tx, guests, [values]));
    expect(inserted).toEqual(await db().select().from(guests).where(eq(guests.id, id)));
    expect(inserted[0]).toMatchObject({ allergens: ['gluten', 'peanuts'], lastVisitAt: new Date('2026-11-25T10:00:00.123Z'), email: null });
  });

  it('returns the row already there for a taken key with onConflictKeep, unchanged, beside the rows it inserts', async () => {
    const first = await historyEvent({ id: newId() });
    const [stored] = await insertRows(db(), events, [first]);
    const again = { ...first, data: { replaced: true } };
    const other = await historyEvent({ id: newId() });
    const rows = await transaction((tx) => insertRows(tx, events, [again, other], { onConflictKeep: ['id'] }));
    expect(rows).toEqual([stored, (await readBack(other.id!))[0]]);
    expect(await readBack(first.id!)).toEqual([stored]);
  });

  it('fails only the savepoint they run in: the transaction around it goes on and commits', async () => {
    const first = await historyEvent({ id: newId() });
    const second = await historyEvent({ id: newId() });
    await transaction(async (tx) => {
      await insertRows(tx, events, [first]);
      // The same id again, in a savepoint: a unique violation that the savepoint absorbs.
      await expect(savepoint(tx, (sp) => insertRows(sp, events, [first]))).rejects.toMatchObject({ code: '23505' });
      await insertRows(tx, events, [second]);
    });
    expect(await readBack(first.id!)).toHaveLength(1);
    expect(await readBack(second.id!)).toHaveLength(1);
  });

  it('lets PostgreSQL compute the columns given as SQL and returns only the columns asked for', async () => {
    const rows = [await historyEvent({ id: newId() }), await historyEvent({ id: newId() })];
    const inserted = await insertRows(db(), events, rows, {
      computed: { createdAt: (_, i) => `timestamptz '2026-11-25T10:00:00Z' + interval '${i} days'`, dispatchedAt: () => 'default' },
      returning: ['id', 'createdAt', 'dispatchedAt'],
      prepare: false,
    });
    expect(inserted).toEqual([
      { id: rows[0].id, createdAt: new Date('2026-11-25T10:00:00Z'), dispatchedAt: null },
      { id: rows[1].id, createdAt: new Date('2026-11-26T10:00:00Z'), dispatchedAt: null },
    ]);
    // The other columns were written as given.
    const [stored] = await readBack(rows[1].id!);
    expect(stored).toMatchObject({
      data: rows[1].data,
      actor: rows[1].actor,
      published: false,
      createdAt: new Date('2026-11-26T10:00:00Z'),
    });
  });
});
