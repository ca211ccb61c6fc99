import { logger } from '../../logger.js';
import { sql } from 'drizzle-orm';
import { prepareSql } from '../../db/client.js';
import { prepareSelectAll } from '../../db/prepared-select.js';
import { events } from '../../db/schema/index.js';
import { isConnectionError } from '../../lib/connection-errors.js';
import { createMicroBatcher, runEachAlone, type BatchOutcomes, type MicroBatcher } from '../../lib/micro-batch.js';
import { eventBatchSize, eventJob, type EventJob } from '../../jobs/event-job.js';
import { isQueueConnectionReady } from '../../queues/queues.js';
import { mayRunAutomations, runAutomations } from '../automations/run-automations.js';
import type { DeliveryQueueSettings } from '../webhooks/enqueue-deliveries.js';
import { offerFreedTable } from '../waitlist/offer-freed-table.js';
import { refreshEstimatesAfter, someoneWaitsAt } from '../waitlist/wait-quotes.js';
import { enqueueEventsWhenRedisIsBack } from '../outbox/outbox.js';

/**
 * A batch's events, each with whether its automations and its venue's queue have anything to do: an
 * event that runs none and changes no estimate sends no statement of its own for either. One text
 * for any number of events, prepared: planned once per connection.
 */
const selectEvents = prepareSelectAll(events, sql`${events.id} = any(${sql.placeholder('ids')}::uuid[])`, {
  mayRunAutomations: mayRunAutomations(events),
  someoneWaits: someoneWaitsAt(events.venueId),
});

/** Marks events dispatched, so that the outbox sweeper leaves them alone; prepared as selectEvents is. */
const markDispatched = prepareSql(
  sql`update events set dispatched_at = clock_timestamp() where id = any(${sql.placeholder('ids')}::uuid[])`,
);

/**
 * Processes outbox events together: their automations in one transaction and one enqueue, the
 * waiting-list offers one by one (rare, each its own transaction), the waiting entries' estimates of
 * each venue whose floor changed (src/services/waitlist/wait-quotes.ts), then one update marks them all
 * dispatched so the sweeper leaves them alone. Every step is idempotent: an event processed twice
 * (sweeper, crash before the mark, concurrent jobs) changes nothing. An event whose offer failed is
 * not marked and fails alone.
 */
export async function processEvents(ids: string[], settings: DeliveryQueueSettings): Promise<BatchOutcomes<string>> {
  const outcomes: BatchOutcomes<string> = new Map();
  const rows = (await selectEvents({ ids })).filter((e) => !e.dispatchedAt);
  if (!rows.length) return outcomes;
  try {
    await runAutomations(rows, settings);
  } catch (err) {
    // Redis went away while the deliveries were enqueued: these jobs may be lost with it (an emptied
    // Redis), so the events are enqueued again as soon as Redis is back rather than after the sweeper's 30 s.
    if (!isQueueConnectionReady()) enqueueEventsWhenRedisIsBack(rows);
    throw err;
  }
  // Waiting list: a reservation event that freed a table may offer it to a waiting party.
  // Each offer logs as its own job would (an event's job id is the event id): the batch has no single job.
  const offered = await Promise.allSettled(
    rows.map((event) => offerFreedTable(event, logger.child({ queue: eventJob.queueName, jobId: event.id }))),
  );
  // The waiting entries' estimates, once per venue whose floor or queue the batch changed.
  const notEstimated = await refreshEstimatesAfter(rows);
  const done = rows.filter((event, i) => {
    const result = offered[i];
    if (result.status === 'rejected')
      outcomes.set(event.id, result.reason instanceof Error ? result.reason : new Error(String(result.reason)));
    const estimateFailure = notEstimated.get(event.id);
    if (estimateFailure && result.status === 'fulfilled') outcomes.set(event.id, estimateFailure);
    return result.status === 'fulfilled' && !estimateFailure;
  });
  if (done.length) await markDispatched({ ids: done.map((e) => e.id) });
  return outcomes;
}

/**
 * A batch that failed as a whole is tried again event by event, so that one event the batch could
 * not process fails its own job only; a database or Redis that is unreachable fails them all at
 * once (their jobs are postponed without consuming an attempt, start-worker.ts).
 */
async function processBatch(ids: string[], settings: DeliveryQueueSettings): Promise<BatchOutcomes<string>> {
  try {
    return await processEvents(ids, settings);
  } catch (err) {
    if (ids.length === 1 || isConnectionError(err) || !isQueueConnectionReady()) throw err;
    return runEachAlone(ids, async (id) => {
      const failed = (await processEvents([id], settings)).get(id);
      if (failed) throw failed;
    });
  }
}

/** How long the first event job of a batch waits for others (eventBatchSize at most): a lone event waits a few milliseconds. */
const eventBatchLingerMs = 5;

/**
 * One batcher per organisation with jobs running (fair queues, docs/architecture.md): another
 * organisation's event started beside a backlog's batch of 100 is processed in a batch of its own at
 * once, not with the backlog's next 99. A batcher is dropped when its last job ends.
 */
const batchers = new Map<string, { batcher: MicroBatcher<string>; running: number }>();

/**
 * worker-events: one outbox event, processed in a batch with its organisation's jobs running beside
 * it; the deliveries enqueued with the role's `settings` (one configuration per process: a batcher
 * takes those of the job that started it).
 */
export async function processEventInBatch({ eventId, organisationId = '' }: EventJob, settings: DeliveryQueueSettings): Promise<void> {
  let entry = batchers.get(organisationId);
  if (!entry) {
    entry = {
      batcher: createMicroBatcher((ids: string[]) => processBatch(ids, settings), {
        maxSize: eventBatchSize,
        lingerMs: eventBatchLingerMs,
      }),
      running: 0,
    };
    batchers.set(organisationId, entry);
  }
  entry.running++;
  try {
    await entry.batcher.submit(eventId);
  } finally {
    if (--entry.running === 0) batchers.delete(organisationId);
  }
}
