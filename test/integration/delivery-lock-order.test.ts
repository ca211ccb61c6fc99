import { eq } from 'drizzle-orm';
import postgres from 'postgres';
import { db } from '../../src/db/client.js';
import { webhookDeliveryAttempts } from '../../src/db/schema/index.js';
import { describe, expect, it } from 'vitest';
import { recordFailure, type AttemptRecord } from '../../src/services/webhooks/delivery-state.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { client, createTenant } from '../support/harness.js';
import { untilBlockedBy } from '../support/lock-waits.js';
import { emitReservationEvent, subscribePartner, useWebhookPipeline, waitForDelivery } from '../support/webhook-fixtures.js';

// A delivery's record and the disabling of its destination take their rows in the same order (the
// destination, then the delivery): against the real PostgreSQL, the disabling's two steps taken by
// hand around a record that starts between them.
useOwnQueuePrefix('lock-order');
// worker-events makes the delivery; no worker attempts it: the test records its outcome itself.
const pipeline = useWebhookPipeline({ webhooksRole: false });

describe('the lock order of a delivery’s record', () => {
  it('a record waits for its destination before it takes its delivery, as a disabling does, so the two cannot deadlock', async () => {
    const tenant = await createTenant();
    const api = client(pipeline.url, tenant.key);
    const endpointId = await subscribePartner(api, tenant.venueId, pipeline.receiver.url);
    const { eventId } = await emitReservationEvent(tenant);
    const delivery = await waitForDelivery(eventId, (d) => d.status === 'pending');
    const failed: AttemptRecord = {
      deliveryId: delivery.id,
      outcome: { status: 500, error: 'HTTP 500', endpointId, url: pipeline.receiver.url },
      reachedEndpointId: endpointId,
      log: {
        attempt: 1,
        startedAt: new Date(),
        durationMs: 3,
        responseStatus: 500,
        error: 'HTTP 500',
        responseBodyExcerpt: null,
        traceparent: null,
      },
    };

    const disabling = postgres(pipeline.config.DATABASE_URL, { max: 1, onnotice: () => {} });
    try {
      let recorded: ReturnType<typeof recordFailure> | undefined;
      await disabling.begin(async (tx) => {
        // The disabling's first step: the destination's row.
        await tx`update webhook_endpoints set is_active = false where id = ${endpointId}`;
        const [{ holderPid }] = await tx<{ holderPid: number }[]>`select pg_backend_pid() as "holderPid"`;
        // A failed attempt's record starts meanwhile and waits for that row.
        recorded = recordFailure(failed, new Date(Date.now() + 60_000), { failures: 3, minutes: 0 });
        recorded.catch(() => {});
        // Asked on another connection: this transaction's reads of pg_stat_activity keep their first snapshot.
        await untilBlockedBy(holderPid, 10_000);
        // The second step: the destination's pending deliveries. Were the record holding its delivery
        // while it waits, this would wait for it in turn, and PostgreSQL would fail one of the two.
        const annulled = await tx`update webhook_deliveries set status = 'discarded', discard_reason = 'endpoint_disabled'
          where endpoint_id = ${endpointId} and status = 'pending' returning id`;
        expect(annulled.map((r) => r.id)).toEqual([delivery.id]);
      });
      // The record then finds the delivery concluded: not applied; its attempt is logged.
      expect(await recorded).toEqual({ applied: false, disableDue: false });
    } finally {
      await disabling.end();
    }
    expect((await waitForDelivery(eventId, () => true)).discardReason).toBe('endpoint_disabled');
    const logged = await db().select().from(webhookDeliveryAttempts).where(eq(webhookDeliveryAttempts.deliveryId, delivery.id));
    expect(logged.map((a) => a.responseStatus)).toEqual([500]);
  });
});
