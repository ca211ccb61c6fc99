import { and, asc, gte, isNull, lt, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { addEventJobs, eventJob } from '../../jobs/event-job.js';
import { addCatchUpSweepJob } from '../../jobs/timer-job.js';
import { getQueue, getQueueConnection } from '../../queues/queues.js';
import { requeueUnlessPending } from '../../queues/requeue-jobs.js';
import { findUnsequencedOrganisations, sequenceEventsOf, vacuumUnsequencedEvents } from './event-sequencer.js';

/** docs/architecture.md: the process that committed an event enqueues it itself; after 30 s it is the sweeper's. */
const sweepAfterSeconds = 30;
const batchSize = 1000;
/** Events are numbered for the stream right after their commit; still unnumbered after this long, their process died first. */
const unsequencedAfterSeconds = 5;

/**
 * Re-enqueues every event still undispatched 30 s after its commit (Redis was down or lost its
 * data, the process died between commit and enqueue), in batches until none is left, so a backlog
 * stranded by an outage is handed back at once rather than a batch per beat. An event whose job
 * waits or runs is left alone; one whose job ended is given a fresh job.
 */
export async function sweepOutbox(): Promise<number> {
  const queue = getQueue(eventJob.queueName);
  let requeued = 0;
  let after: { createdAt: Date; id: string } | undefined;
  for (;;) {
    const stale = await db()
      .select({
        id: events.id,
        createdAt: events.createdAt,
        organisationId: events.organisationId,
        venueId: events.venueId,
        type: events.type,
        trace: events.traceContext,
      })
      .from(events)
      .where(
        and(
          isNull(events.dispatchedAt),
          lt(events.createdAt, sql`statement_timestamp() - make_interval(secs => ${sweepAfterSeconds})`),
          after ? sql`(${events.createdAt}, ${events.id}) > (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)` : undefined,
        ),
      )
      .orderBy(asc(events.createdAt), asc(events.id))
      .limit(batchSize);
    // An event committed while tracing was on is processed in the trace that committed it.
    if (stale.length) requeued += await requeueUnlessPending(queue, stale, (rows) => addEventJobs(rows.map(withStoredTrace)));
    if (stale.length < batchSize) break;
    after = stale[stale.length - 1];
  }
  await scheduleCatchUpSweep();
  // The numbering queue's dead rows first: numbering reads past each of them, and a bulk's (millions
  // after a seed or a migration) made it run past the statement timeout; vacuumed after it, a failed
  // numbering left them there for good on a server without autovacuum.
  await vacuumUnsequencedEvents();
  // Stream positions of events whose process died between their commit and numbering them.
  await sequenceEventsOf(await findUnsequencedOrganisations(unsequencedAfterSeconds));
  return requeued;
}

function withStoredTrace<T extends { trace: Record<string, string> | null }>(row: T) {
  return { ...row, trace: row.trace ?? undefined };
}

/** An event still undispatched this long after its commit is not merely being processed. */
const unattendedAfterSeconds = 5;
/** How many of the oldest such events are looked up in Redis (events re-enqueued by their process come first). */
const catchUpLookahead = 1000;
/** Catch-up sweeps come at least this far apart. */
const catchUpSpacingMs = 5000;

/**
 * After an outage, the events committed while Redis was away by processes that then died turn 30 s
 * old up to 30 s before the next regular sweep: without more, they would wait for it, and a backlog
 * would start to drain only about 30 s after Redis's return. So when one of the oldest events
 * undispatched for 5 to 30 s has no job in Redis (it is stranded, not queued behind others), one
 * extra sweep is scheduled for the moment it turns 30 s old (at least 5 s from now). The 30 s rule itself is
 * unchanged (docs/architecture.md); one catch-up at most is pending (its job id).
 */
async function scheduleCatchUpSweep(): Promise<void> {
  const oldest = await db()
    .select({
      id: events.id,
      dueInMs: sql<number>`(extract(epoch from ${events.createdAt} - clock_timestamp()) * 1000 + ${sweepAfterSeconds * 1000})::int`,
    })
    .from(events)
    .where(
      and(
        isNull(events.dispatchedAt),
        gte(events.createdAt, sql`statement_timestamp() - make_interval(secs => ${sweepAfterSeconds})`),
        lt(events.createdAt, sql`statement_timestamp() - make_interval(secs => ${unattendedAfterSeconds})`),
      ),
    )
    .orderBy(asc(events.createdAt))
    .limit(catchUpLookahead);
  if (!oldest.length) return;
  const queue = getQueue(eventJob.queueName);
  const pipeline = getQueueConnection().pipeline();
  for (const { id } of oldest) pipeline.exists(queue.toKey(id));
  const exists = (await pipeline.exec()) ?? [];
  const stranded = oldest.find((_, i) => exists[i]?.[1] !== 1);
  if (!stranded) return;
  await addCatchUpSweepJob(Math.max(catchUpSpacingMs, stranded.dueInMs + 500));
}
