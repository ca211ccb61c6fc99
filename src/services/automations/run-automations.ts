import { and, arrayContains, asc, eq, sql } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { automationRuns, automations, events, webhookDeliveries, webhookEndpoints } from '../../db/schema/index.js';
import { conditionsMatch } from '../../lib/automation-conditions.js';
import { enqueueDeliveries } from '../webhooks/delivery-queue.js';
import { deliveryKey } from '../webhooks/envelope.js';

type EventRow = typeof events.$inferSelect;

/** The one action of an automation for now: index 0 of the delivery key `automation:<runId>:<n>`. */
const actionIndex = 0;

async function matchingAutomations(event: EventRow, conn: DbOrTx, lock: boolean) {
  const query = conn
    .select()
    .from(automations)
    .where(and(eq(automations.venueId, event.venueId), eq(automations.status, 'active'), arrayContains(automations.eventTypes, [event.type])));
  // `for share`: an automation being deactivated waits for this transaction, so it annuls what it creates.
  const candidates = lock ? await query.for('share') : await query;
  return candidates.filter((a) => a.organisationId === event.organisationId && conditionsMatch(a.conditions, event.data));
}

/**
 * Runs the venue's active automations that match an event: one run per (automation, event) and one
 * delivery per action, each created exactly once (unique constraints), then enqueues the pending
 * deliveries (jobId = delivery id). Safe to repeat: a replay finds the same rows, and BullMQ ignores
 * a job id it already has.
 */
export async function runAutomations(event: EventRow): Promise<void> {
  // Test organisations send nothing (interface.md §5); most events match no automation.
  if (!event.livemode || !(await matchingAutomations(event, db, false)).length) return;
  const pending = await db.transaction(async (tx) => {
    const matching = await matchingAutomations(event, tx, true);
    if (!matching.length) return [];
    // A no-op update on conflict returns the rows a previous run of this event created.
    const runs = await tx
      .insert(automationRuns)
      .values(matching.map((a) => ({ automationId: a.id, eventId: event.id })))
      .onConflictDoUpdate({ target: [automationRuns.automationId, automationRuns.eventId], set: { eventId: sql`excluded.event_id` } })
      .returning();
    const venueEndpoints = await tx
      .select({ id: webhookEndpoints.id, url: webhookEndpoints.url })
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.venueId, event.venueId))
      .orderBy(asc(webhookEndpoints.createdAt), asc(webhookEndpoints.id));
    const main = venueEndpoints[0] ?? null; // the first registered

    const byId = new Map(matching.map((a) => [a.id, a]));
    const rows = runs.map((run) => {
      const { action } = byId.get(run.automationId)!;
      const endpoint = action.endpointId ? (venueEndpoints.find((e) => e.id === action.endpointId) ?? { id: action.endpointId, url: null }) : main;
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
    const deliveries = await tx
      .insert(webhookDeliveries)
      .values(rows)
      .onConflictDoUpdate({ target: [webhookDeliveries.runId, webhookDeliveries.actionIndex], set: { runId: sql`excluded.run_id` } })
      .returning({ id: webhookDeliveries.id, status: webhookDeliveries.status, nextAttemptAt: webhookDeliveries.nextAttemptAt });
    return deliveries.filter((d) => d.status === 'pending');
  });
  await enqueueDeliveries(pending);
}
