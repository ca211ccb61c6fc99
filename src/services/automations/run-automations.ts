import { sql, type Column, type SQL } from 'drizzle-orm';
import { renderOnce, runSql, transaction, type Tx } from '../../db/client.js';
import { insertRows } from '../../db/insert-rows.js';
import { columnsOf, decodeJsonRow } from '../../db/json-rows.js';
import { qualifiedColumn } from '../../db/prepared-select.js';
import { automationRuns, automations, events, webhookDeliveries } from '../../db/schema/index.js';
import { conditionsMatch } from '../../lib/automation-conditions.js';
import { groupBy } from '../../lib/group-by.js';
import { isAutomationTrigger } from '../../lib/event-catalogue.js';
import { enqueueDeliveries, type DeliveryQueueSettings } from '../webhooks/enqueue-deliveries.js';
import { deliveryKey } from '../webhooks/envelope.js';

/** An event as worker-events read it: `mayRunAutomations`, whether one of its venue's active automations was on its type then. */
type EventRow = typeof events.$inferSelect & { mayRunAutomations: boolean };
type AutomationRow = typeof automations.$inferSelect;

/**
 * SQL, read with a batch's events (process-event.ts): whether the event's venue has an active
 * automation on the event's type. Most events have none, and the others mostly match: only these are
 * matched against the venue's automations (their conditions and age too), under their lock; the
 * others open no transaction and send no statement of their own. The event's columns are named with
 * their table (qualifiedColumn): a bare venue_id here would be the automation's own.
 */
export function mayRunAutomations(event: { venueId: Column; type: Column }): SQL<boolean> {
  return sql<boolean>`exists (select 1 from automations a where a.venue_id = ${qualifiedColumn(event.venueId)} and a.status = 'active' and ${qualifiedColumn(event.type)} = any(a.event_types))`;
}

/**
 * Up to this many rows a batch's inserts are prepared statements, planned once per connection (a
 * request's few events); a backlog's larger batches are not, so that each connection keeps a bounded
 * set of statements (one text per row count).
 */
const preparedBatchRows = 8;

/** The one action of an automation for now: index 0 of the delivery key `automation:<runId>:<n>`. */
const actionIndex = 0;

/** A venue's webhook endpoint as a delivery names it. */
interface VenueEndpoint {
  id: string;
  url: string;
}

/**
 * The active automations of these venues, `for share` (an automation being deactivated waits for
 * this transaction, so it annuls what it creates), each with its venue's webhook endpoints in the
 * order they were registered (the first is the venue's main one): one prepared statement for any
 * number of venues, planned once per connection, and no round trip of the endpoints' own for an
 * event processed alone (docs/benchmarks.md "The automations and their endpoints in one statement").
 */
const lockAutomationsStatement = renderOnce(sql`
  select a.*, (select coalesce(json_agg(json_build_object('id', w.id, 'url', w.url) order by w.created_at, w.id), '[]')
      from webhook_endpoints w where w.venue_id = a.venue_id) as endpoints
    from automations a
    where a.venue_id = any(${sql.placeholder('venueIds')}::uuid[]) and a.status = 'active'
    order by a.id
    for share of a`);

async function lockActiveAutomations(
  venueIds: string[],
  tx: Tx,
): Promise<{ candidates: AutomationRow[]; endpointsOf: Map<string, VenueEndpoint[]> }> {
  const rows = await runSql<Record<string, unknown> & { endpoints: VenueEndpoint[] }>(tx, lockAutomationsStatement, {
    values: { venueIds },
  });
  const candidates = rows.map((raw) => decodeJsonRow<AutomationRow>(columnsOf(automations), raw));
  // Every automation of a venue carries the venue's endpoints.
  return { candidates, endpointsOf: new Map(candidates.map((a, i) => [a.venueId, rows[i].endpoints])) };
}

/**
 * Every (automation, event) pair that runs: same venue and organisation, the event's type, conditions
 * met, and the event no older than the automation. An automation acts on what happens once it exists:
 * an event that happened before, whose processing a busy worker had not reached yet when the
 * automation was created, is not sent to its partner (it is in GET /events).
 */
function matchingPairs(liveEvents: EventRow[], candidates: AutomationRow[]): Array<{ event: EventRow; automation: AutomationRow }> {
  const byVenue = groupBy(candidates, (a) => a.venueId);
  return liveEvents.flatMap((event) =>
    (byVenue.get(event.venueId) ?? [])
      .filter(
        (a) =>
          a.organisationId === event.organisationId &&
          a.eventTypes.includes(event.type) &&
          event.createdAt >= a.createdAt &&
          conditionsMatch(a.conditions, event.data),
      )
      .map((automation) => ({ event, automation })),
  );
}

/**
 * Runs the venues' active automations that match the events: one run per (automation, event) and
 * one delivery per action, each created exactly once (unique constraints), then enqueues the
 * pending deliveries (jobId = delivery id), all in one transaction and one enqueue for the whole
 * batch. Safe to repeat, also concurrently: a replay finds the same rows (rows are written in key
 * order, so two batches sharing events cannot deadlock), and BullMQ ignores a job id it already has.
 */
export async function runAutomations(batch: EventRow[], settings: DeliveryQueueSettings): Promise<void> {
  // Test organisations send nothing (docs/api.md "Keys, limits"); most events match no automation;
  // operator events run none, even for an automation row that names them.
  const liveEvents = [
    ...new Map(batch.filter((e) => e.livemode && e.mayRunAutomations && isAutomationTrigger(e.type)).map((e) => [e.id, e])).values(),
  ];
  if (!liveEvents.length) return;
  const venueIds = [...new Set(liveEvents.map((e) => e.venueId))];
  const pending = await transaction(async (tx) => {
    const { candidates, endpointsOf } = await lockActiveAutomations(venueIds, tx);
    const pairs = matchingPairs(liveEvents, candidates);
    if (!pairs.length) return [];
    pairs.sort((a, b) => a.event.id.localeCompare(b.event.id) || a.automation.id.localeCompare(b.automation.id));
    // A no-op update on conflict returns the rows a previous run of the event created.
    // insertRows, not drizzle's insert builder: these two carry a value per event and run for every
    // batch, and drizzle renders each value with type checks (docs/benchmarks.md "The event-processing step on its own").
    const runs = await insertRows(
      tx,
      automationRuns,
      pairs.map(({ event, automation }) => ({ automationId: automation.id, eventId: event.id })),
      { onConflictKeep: ['automationId', 'eventId'], prepare: pairs.length <= preparedBatchRows },
    );
    const pairOf = new Map(pairs.map((p) => [`${p.automation.id}:${p.event.id}`, p]));
    const rows = runs
      .map((run) => {
        const { event, automation } = pairOf.get(`${run.automationId}:${run.eventId}`)!;
        const { action } = automation;
        const venueEndpoints = endpointsOf.get(event.venueId) ?? [];
        const main = venueEndpoints[0] ?? null; // the first registered
        const endpoint = action.endpointId
          ? (venueEndpoints.find((e) => e.id === action.endpointId) ?? { id: action.endpointId, url: null })
          : main;
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
      })
      .sort((a, b) => a.runId.localeCompare(b.runId));
    const deliveries = await insertRows(tx, webhookDeliveries, rows, {
      onConflictKeep: ['runId', 'actionIndex'],
      prepare: rows.length <= preparedBatchRows,
    });
    return deliveries.filter((d) => d.status === 'pending');
  });
  await enqueueDeliveries(pending, settings);
}
