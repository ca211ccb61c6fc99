import { randomUUID } from 'node:crypto';
import { and, asc, eq, gt, inArray } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { db, pool } from '../../src/db/client.js';
import { eventPositions, events, unsequencedEvents } from '../../src/db/schema/index.js';
import { sequenceEvents, sequenceEventsOf } from '../../src/services/outbox/event-sequencer.js';
import { systemActor, transactionWithEvents } from '../../src/services/outbox/outbox.js';
import { eventually } from '../support/eventually.js';
import { createTenant } from '../support/harness.js';

/**
 * The live stream's guarantee (a reader at position N has seen every event below N; resume misses
 * nothing, repeats nothing), raced: many writers of ONE organisation commit side by side while
 * several numbering runs (as from several processes) and a reader that reads like a stream feed
 * ("position > mine, in order") run at once. A numbering that let a reader see N before N-1 is
 * visible, or gave one position twice, leaves a gap, a repeat or a reorder in what the reader saw.
 */
/** Until every event of the organisation is numbered: a run that finds the lock taken leaves them to the holder. */
async function numberAll(organisationId: string): Promise<void> {
  await eventually(() => sequenceEvents(organisationId), 20_000, 'a numbering run that finds the lock free', 10);
}

/** Every event of the organisation with its position (null: not numbered), in position order. */
function positionsOf(organisationId: string) {
  return db()
    .select({ id: events.id, position: eventPositions.position })
    .from(events)
    .leftJoin(eventPositions, eq(eventPositions.eventId, events.id))
    .where(eq(events.organisationId, organisationId))
    .orderBy(asc(eventPositions.position));
}

describe('event sequencer under concurrent writers of one organisation', () => {
  it('gives a reader every event once, in position order, with no gap', async () => {
    const t = await createTenant();
    const seen: { id: string; position: number }[] = [];
    let writing = true;

    const reader = (async () => {
      let position = 0;
      for (;;) {
        const rows = await db()
          .select({ id: eventPositions.eventId, position: eventPositions.position })
          .from(eventPositions)
          .where(and(eq(eventPositions.organisationId, t.organisationId), gt(eventPositions.position, position)))
          .orderBy(asc(eventPositions.position))
          .limit(500);
        seen.push(...rows);
        if (rows.length) position = rows[rows.length - 1].position;
        else if (!writing) return;
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();

    // Numbering runs racing each other, as the runs of several processes would.
    const numberers = Array.from({ length: 4 }, async () => {
      while (writing) {
        await numberAll(t.organisationId);
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 3));
      }
    });

    let emitted = 0;
    const writers = Array.from({ length: 12 }, async (_, w) => {
      for (let i = 0; i < 25; i++) {
        const count = 1 + ((w + i) % 3);
        await transactionWithEvents(systemActor('race'), async (_tx, emit) => {
          for (let e = 0; e < count; e++) {
            emit({
              organisationId: t.organisationId,
              venueId: t.venueId,
              livemode: true,
              type: 'webhook_test',
              subjectType: 'none',
              subjectId: null,
              data: { w, i, e },
            });
          }
        });
        emitted += count;
      }
    });
    await Promise.all(writers);
    await numberAll(t.organisationId);
    writing = false;
    await Promise.all(numberers);
    await reader;

    expect(await db().select().from(unsequencedEvents).where(eq(unsequencedEvents.organisationId, t.organisationId))).toEqual([]);
    const all = await positionsOf(t.organisationId);
    expect(all).toHaveLength(emitted);
    expect(all.every((e) => e.position !== null)).toBe(true);
    // No gap, no repeat: the positions run on by one; the reader saw exactly that sequence.
    expect(all.map((e) => e.position)).toEqual(all.map((_, i) => all[0].position! + i));
    expect(seen).toEqual(all);
  });

  it('numbers many organisations committing at once, each in one sequence a reader sees whole', async () => {
    // Each commit asks this process's run loop to number its organisation (transactionWithEvents);
    // one run numbers every pending organisation in one transaction, beside a racing numberer per organisation.
    const tenants = await Promise.all(Array.from({ length: 6 }, () => createTenant()));
    let writing = true;
    const seen = new Map<string, { id: string; position: number }[]>(tenants.map((t) => [t.organisationId, []]));
    const readers = tenants.map(async ({ organisationId }) => {
      let position = 0;
      for (;;) {
        const rows = await db()
          .select({ id: eventPositions.eventId, position: eventPositions.position })
          .from(eventPositions)
          .where(and(eq(eventPositions.organisationId, organisationId), gt(eventPositions.position, position)))
          .orderBy(asc(eventPositions.position))
          .limit(500);
        seen.get(organisationId)!.push(...rows);
        if (rows.length) position = rows[rows.length - 1].position;
        else if (!writing) return;
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    });
    let racing = true;
    const numberers = tenants.map(async ({ organisationId }) => {
      while (racing) {
        await numberAll(organisationId);
        await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20));
      }
    });
    const commit = (t: (typeof tenants)[number], data: Record<string, number>) =>
      transactionWithEvents(systemActor('race'), async (_tx, emit) => {
        emit({
          organisationId: t.organisationId,
          venueId: t.venueId,
          livemode: true,
          type: 'webhook_test',
          subjectType: 'none',
          subjectId: null,
          data,
        });
      });
    const writers = tenants.flatMap((t) =>
      Array.from({ length: 3 }, async (_, w) => {
        for (let i = 0; i < 15; i++) await commit(t, { w, i });
      }),
    );
    await Promise.all(writers);
    racing = false;
    await Promise.all(numberers);
    // The last commit of each organisation is numbered by the run loop alone, within the stream's second.
    await Promise.all(tenants.map((t) => commit(t, { last: 1 })));
    const ids = tenants.map((t) => t.organisationId);
    const unnumbered = () => db().select().from(unsequencedEvents).where(inArray(unsequencedEvents.organisationId, ids));
    await eventually(async () => (await unnumbered()).length === 0, 5000, 'the last commits numbered by the run loop');
    expect(await unnumbered()).toEqual([]);
    writing = false;
    await Promise.all(readers);
    for (const { organisationId } of tenants) {
      const all = await positionsOf(organisationId);
      expect(all).toHaveLength(46);
      expect(all.map((e) => e.position)).toEqual(all.map((_, i) => i + 1));
      expect(seen.get(organisationId)).toEqual(all);
    }
  });

  it('numbers an organisation after the position its events already have', async () => {
    const t = await createTenant();
    await transactionWithEvents(systemActor('test'), async (_tx, emit) => {
      emit({
        organisationId: t.organisationId,
        venueId: t.venueId,
        livemode: true,
        type: 'webhook_test',
        subjectType: 'none',
        subjectId: null,
        data: {},
      });
    });
    await numberAll(t.organisationId);
    const [first] = await positionsOf(t.organisationId);
    expect(first.position).toBeGreaterThan(0);
    await transactionWithEvents(systemActor('test'), async (_tx, emit) => {
      emit({
        organisationId: t.organisationId,
        venueId: t.venueId,
        livemode: true,
        type: 'webhook_test',
        subjectType: 'none',
        subjectId: null,
        data: {},
      });
      emit({
        organisationId: t.organisationId,
        venueId: t.venueId,
        livemode: true,
        type: 'webhook_test',
        subjectType: 'none',
        subjectId: null,
        data: {},
      });
    });
    await numberAll(t.organisationId);
    const positions = (await positionsOf(t.organisationId)).map((r) => r.position);
    expect(positions).toEqual([first.position, first.position! + 1, first.position! + 2]);
  });

  it("numbers many organisations left unnumbered (a dead process's, for the sweeper) over several runs, and leaves one whose lock another run holds to that run", async () => {
    // 130 organisations: more than one run's 100. Rows inserted directly, as a process that died
    // after its commit leaves them: queued for numbering (the insert trigger), never numbered.
    const organisations = Array.from({ length: 130 }, () => randomUUID());
    const venueId = randomUUID();
    await db()
      .insert(events)
      .values(
        organisations.flatMap((organisationId) =>
          [1, 2].map((n) => ({
            organisationId,
            venueId,
            livemode: true,
            type: 'webhook_test',
            subjectType: 'none' as const,
            subjectId: null,
            data: { n },
            dispatchedAt: new Date(),
          })),
        ),
      );
    const [locked] = organisations;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let holding = () => {};
    const lockTaken = new Promise<void>((resolve) => (holding = resolve));
    const holder = pool().begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(hashtext('event-sequencer'), hashtext(${locked}))`;
      holding();
      await held;
    });
    await lockTaken;
    try {
      expect(await sequenceEventsOf(organisations)).toEqual([locked]);
    } finally {
      release();
      await holder;
    }
    for (const organisationId of organisations.slice(1)) {
      expect((await positionsOf(organisationId)).map((r) => r.position)).toEqual([1, 2]);
    }
    expect((await positionsOf(locked)).map((r) => r.position)).toEqual([null, null]);
    expect(await sequenceEventsOf([locked])).toEqual([]);
    expect((await positionsOf(locked)).map((r) => r.position)).toEqual([1, 2]);
  });
});
