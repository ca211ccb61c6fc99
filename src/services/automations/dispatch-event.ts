import { and, arrayContains, asc, eq, inArray } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { automationRuns, automations, events, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { conditionsMatch } from '../../lib/automation-conditions.js';
import { enqueueDeliveries, type DeliveryToEnqueue } from '../webhooks/delivery-queue.js';
import { deliveryKey } from '../webhooks/envelope.js';

type EventRow = typeof events.$inferSelect;

/** The one action of an automation for now: index 0 of the delivery key `automation:<runId>:<n>`. */
const actionIndex = 0;

/**
 * Runs the venue's active automations that match an event: one run per (automation, event) and one
 * delivery per action, each created exactly once (unique constraints), then enqueued (jobId =
 * delivery id). Safe to repeat: a replayed event job finds the rows and enqueues only what is still
 * pending, which BullMQ ignores when the job already exists.
 */
export async function runAutomationsForEvent(event: EventRow): Promise<void> {
  // Test organisations send nothing (interface.md §5).
  if (!event.livemode) return;
  const pending = await db.transaction(async (tx): Promise<DeliveryToEnqueue[]> => {
    // `for share`: an automation being deactivated waits for this transaction, so it annuls what it creates.
    const candidates = await tx
      .select()
      .from(automations)
      .where(and(eq(automations.venueId, event.venueId), eq(automations.status, 'active'), arrayContains(automations.eventTypes, [event.type])))
      .for('share');
    const matching = candidates.filter((a) => a.organisationId === event.organisationId && conditionsMatch(a.conditions, event.data));
    if (!matching.length) return [];

    await tx
      .insert(automationRuns)
      .values(matching.map((a) => ({ automationId: a.id, eventId: event.id })))
      .onConflictDoNothing();
    const runs = await tx
      .select()
      .from(automationRuns)
      .where(and(eq(automationRuns.eventId, event.id), inArray(automationRuns.automationId, matching.map((a) => a.id))));

    const needsMain = matching.some((a) => !a.action.url && !a.action.endpointId);
    const [main] = needsMain
      ? await tx
          .select({ id: webhookEndpoints.id, url: webhookEndpoints.url })
          .from(webhookEndpoints)
          .where(eq(webhookEndpoints.venueId, event.venueId))
          .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id))
          .limit(1)
      : [];
    const endpointIds = matching.flatMap((a) => (a.action.endpointId ? [a.action.endpointId] : []));
    const named = endpointIds.length
      ? await tx.select({ id: webhookEndpoints.id, url: webhookEndpoints.url }).from(webhookEndpoints).where(inArray(webhookEndpoints.id, endpointIds))
      : [];

    const byId = new Map(matching.map((a) => [a.id, a]));
    const rows = runs.map((run) => {
      const { action } = byId.get(run.automationId)!;
      const endpoint = action.endpointId ? (named.find((e) => e.id === action.endpointId) ?? { id: action.endpointId, url: null }) : (main ?? null);
      return {
        organisationId: event.organisationId,
        venueId: event.venueId,
        eventId: event.id,
        eventType: event.type,
        automationId: run.automationId,
        runId: run.id,
        actionIndex,
        idempotencyKey: deliveryKey(run.id, actionIndex),
        destination: action.url ? ('url' as const) : ('endpoint' as const),
        endpointId: action.url ? null : (endpoint?.id ?? null),
        url: action.url ?? endpoint?.url ?? null,
        nextAttemptAt: new Date(event.createdAt.getTime() + action.delayMinutes * 60_000),
      };
    });
    await tx.insert(webhookDeliveries).values(rows).onConflictDoNothing();
    return tx
      .select({ id: webhookDeliveries.id, nextAttemptAt: webhookDeliveries.nextAttemptAt })
      .from(webhookDeliveries)
      .where(and(inArray(webhookDeliveries.runId, runs.map((r) => r.id)), eq(webhookDeliveries.status, 'pending')));
  });
  await enqueueDeliveries(pending);
}
