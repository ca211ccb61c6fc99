import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { eq } from 'drizzle-orm';
import { Queue } from 'bullmq';
import { afterAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { db, pool } from '../../src/db/client.js';
import {
  automationRuns,
  automations,
  events,
  guests,
  reservations,
  reservationTables,
  webhookDeliveries,
} from '../../src/db/schema/index.js';
import { localToInstant } from '../../src/lib/local-time.js';
import { closeQueues, getQueueConnection } from '../../src/queues/queues.js';
import { bullPrefixOf } from '../../src/redis/key-layout.js';
import { checkInvariants, overdueDeliverySeconds } from '../../src/services/invariants/check-invariants.js';
import { webhookDeliveryJob } from '../../src/jobs/webhook-delivery-job.js';
import { enqueueDeliveries } from '../../src/services/webhooks/enqueue-deliveries.js';
import { createTenant } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';
import { useOwnDatabase } from '../support/own-database.js';
import { compiledEntry } from '../support/entry-process.js';

// A database of its own: the delivery sweepers of other test files act on every row of a database,
// and one of them enqueuing the orphaned delivery made it, and so the count, disappear.
const ownDatabase = await useOwnDatabase('invariants');

afterAll(async () => {
  await closeQueues();
  await pool().end();
  await ownDatabase.drop();
});

const tomorrow = localDate(1);

/** A reservation row written directly, as a bug would leave it (the services never do). */
async function insertReservation(
  t: { organisationId: string; venueId: string },
  time: string,
  partySize: number,
  extra: Partial<typeof reservations.$inferInsert> = {},
) {
  const [h, m] = time.split(':').map(Number);
  const startsAt = new Date(localToInstant('Europe/Rome', tomorrow, h * 60 + m));
  const [row] = await db()
    .insert(reservations)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      serviceDate: tomorrow,
      time,
      startsAt,
      endsAt: new Date(startsAt.getTime() + 90 * 60_000),
      partySize,
      status: 'confirmed',
      source: 'api',
      ...extra,
    })
    .returning();
  return row;
}

async function insertDelivery(t: { organisationId: string; venueId: string }, values: Partial<typeof webhookDeliveries.$inferInsert>) {
  const [event] = await db()
    .insert(events)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      type: 'reservation_created',
      subjectType: 'none',
      data: {},
      livemode: true,
    })
    .returning();
  const [automation] = await db()
    .insert(automations)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      name: 'a',
      eventTypes: ['reservation_created'],
      conditions: { partySizeMin: null, partySizeMax: null, sources: null },
      action: { type: 'partner_notification', url: 'https://example.com/hook', endpointId: null, delayMinutes: 0 },
    })
    .returning();
  const [run] = await db().insert(automationRuns).values({ automationId: automation.id, eventId: event.id }).returning();
  const [delivery] = await db()
    .insert(webhookDeliveries)
    .values({
      organisationId: t.organisationId,
      venueId: t.venueId,
      eventId: event.id,
      eventType: event.type,
      automationId: automation.id,
      runId: run.id,
      actionIndex: 0,
      idempotencyKey: `automation:${run.id}:0`,
      destination: 'url',
      url: 'https://example.com/hook',
      ...values,
    })
    .returning();
  return delivery;
}

describe('the invariant check (npm run cli -- check)', () => {
  it('counts each kind of violation, on the venues asked about only', async () => {
    const t = await createTenant();
    const other = await createTenant();
    const fixture = await configureVenue(t.venueId, { pacing: [{ maxCovers: 10, windowMinutes: 30 }] });
    await configureVenue(other.venueId, {});
    const zero = await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] });
    expect(Object.values(zero).every((n) => n === 0)).toBe(true);

    // Pacing: 12 covers starting in the 19:00–19:30 block; flagging one party brings it back to 7.
    await insertReservation(t, '19:00', 5);
    const flaggable = await insertReservation(t, '19:15', 5);
    await insertReservation(t, '19:30', 5); // the next block
    await insertReservation(t, '19:10', 2, { status: 'cancelled' });
    await insertReservation(t, '19:20', 2);
    expect(
      (await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).pacingBlocksOverMaxCovers,
    ).toBe(1);
    await db().update(reservations).set({ needsAttention: true }).where(eq(reservations.id, flaggable.id));
    expect(
      (await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).pacingBlocksOverMaxCovers,
    ).toBe(0);

    // A cancelled reservation still holding its table live.
    const cancelled = await insertReservation(t, '21:00', 2, { status: 'cancelled', tableId: fixture.tableIds.T2, tableAssigned: true });
    await db()
      .insert(reservationTables)
      .values({
        reservationId: cancelled.id,
        tableId: fixture.tableIds.T2,
        venueId: t.venueId,
        during: `[${cancelled.startsAt.toISOString()},${cancelled.endsAt.toISOString()})`,
      });

    // A guest carrying a tag the venue does not have.
    await db()
      .insert(guests)
      .values({
        organisationId: t.organisationId,
        venueId: t.venueId,
        phone: '+393331112223',
        phoneNational: '3331112223',
        serviceTags: ['Ghost'],
      });

    // Deliveries: one pending without a job and overdue; one pending with its job (delayed) is fine.
    const old = new Date(Date.now() - (overdueDeliverySeconds + 60) * 1000);
    await insertDelivery(t, { status: 'pending', nextAttemptAt: old, updatedAt: old });
    const scheduled = await insertDelivery(t, { status: 'pending', nextAttemptAt: new Date(Date.now() + 3600_000), updatedAt: old });
    await enqueueDeliveries([scheduled], processConfig());
    await insertDelivery(t, { status: 'delivered', updatedAt: old });

    expect(await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).toEqual({
      overlappingTableOccupants: 0,
      liveTablesOfFinishedReservations: 1,
      pacingBlocksOverMaxCovers: 0,
      unknownGuestServiceTags: 1,
      pendingDeliveriesWithoutJob: 1,
      overdueDeliveries: 1,
    });
    expect(
      Object.values(await checkInvariants({ venueIds: [other.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).every(
        (n) => n === 0,
      ),
    ).toBe(true);

    // The command line: one JSON object, exit code 2 when anything is counted, 0 otherwise.
    const cli = (venue: string) =>
      promisify(execFile)(process.execPath, [compiledEntry('src/cli/main.ts'), 'check', '--json', '--venues', venue], {
        env: process.env,
      }).then(
        (r) => ({ code: 0, stdout: r.stdout }),
        (e: { code: number; stdout: string }) => ({ code: e.code, stdout: e.stdout }),
      );
    const [bad, good] = await Promise.all([cli(t.venueId), cli(other.venueId)]);
    expect(bad.code, bad.stdout).toBe(2);
    expect(JSON.parse(bad.stdout)).toMatchObject({ unknownGuestServiceTags: 1, violations: 4 });
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ violations: 0 });

    // The database is left consistent: the suite ends with a check of the whole database.
    await db().delete(reservationTables).where(eq(reservationTables.reservationId, cancelled.id));
    await db().delete(guests).where(eq(guests.venueId, t.venueId));
    await db()
      .update(webhookDeliveries)
      .set({ status: 'discarded', discardReason: 'max_attempts' })
      .where(eq(webhookDeliveries.venueId, t.venueId));
    expect(
      Object.values(await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).every((n) => n === 0),
    ).toBe(true);
  });

  it("looks up a delivery's job under the queue prefixes it is given (--queue-prefixes), QUEUE_PREFIX alone by default", async () => {
    const t = await createTenant();
    const old = new Date(Date.now() - 60_000);
    const delivery = await insertDelivery(t, { status: 'pending', nextAttemptAt: new Date(Date.now() + 3600_000), updatedAt: old });
    // Its job is delayed under another prefix, as a test file with queues of its own leaves it.
    const otherPrefix = `${processConfig().QUEUE_PREFIX}other`;
    const other = new Queue(webhookDeliveryJob.queueName, {
      connection: getQueueConnection(),
      prefix: bullPrefixOf(otherPrefix, webhookDeliveryJob.queueName),
    });
    try {
      await other.add('delivery', { deliveryId: delivery.id }, { jobId: delivery.id, delay: 3600_000 });
      expect(
        (await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX] })).pendingDeliveriesWithoutJob,
      ).toBe(1);
      expect((await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [otherPrefix] })).pendingDeliveriesWithoutJob).toBe(0);
      expect(
        (await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX, otherPrefix] }))
          .pendingDeliveriesWithoutJob,
      ).toBe(0);
      const { stdout } = await promisify(execFile)(
        process.execPath,
        [
          compiledEntry('src/cli/main.ts'),
          'check',
          '--json',
          '--venues',
          t.venueId,
          '--queue-prefixes',
          `${processConfig().QUEUE_PREFIX},${otherPrefix}`,
        ],
        { env: process.env },
      );
      expect(JSON.parse(stdout)).toMatchObject({ pendingDeliveriesWithoutJob: 0, violations: 0 });
      // A finished job is no job: nothing will attempt the delivery.
      await other.remove(delivery.id);
      expect(
        (await checkInvariants({ venueIds: [t.venueId], queuePrefixes: [processConfig().QUEUE_PREFIX, otherPrefix] }))
          .pendingDeliveriesWithoutJob,
      ).toBe(1);
    } finally {
      await other.obliterate({ force: true });
      await other.close();
      await db()
        .update(webhookDeliveries)
        .set({ status: 'discarded', discardReason: 'max_attempts' })
        .where(eq(webhookDeliveries.venueId, t.venueId));
    }
  });
});
