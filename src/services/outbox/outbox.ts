import { transaction, type Tx } from '../../db/client.js';
import { insertRows } from '../../db/insert-rows.js';
import { events } from '../../db/schema/index.js';
import { mapInChunks } from '../../lib/chunks.js';
import { sequenceEventsSoon } from './event-sequencer.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { addEventJobs, type EventToEnqueue } from '../../jobs/event-job.js';
import { onQueueConnectionReady } from '../../queues/queues.js';
import type { EventType, HistoryOnlyEventType } from '../../lib/event-catalogue.js';
import { isPublishable, type AuthContext } from '../../core/auth-context.js';
import { activeTraceCarrier, inSpan, type TraceCarrier } from '../../tracing/tracing.js';

/** Who made a change, recorded with its events for the reservation history (docs/reservations.md "Reservation history"). */
export interface Actor {
  kind: 'api_key' | 'widget' | 'system' | 'import';
  /** The key's name, the platform process, or the import's key name. */
  name: string;
}

/** The key behind a request: a publishable key is the booking widget. */
export function actorOf(auth: AuthContext): Actor {
  return { kind: isPublishable(auth) ? 'widget' : 'api_key', name: auth.keyName };
}

/** The platform itself (timers, worker-events, the demo CLI). */
export function systemActor(name: string): Actor {
  return { kind: 'system', name };
}

export interface NewEvent {
  organisationId: string;
  venueId: string;
  livemode: boolean;
  type: EventType | HistoryOnlyEventType;
  subjectType: 'reservation' | 'guest' | 'waitlist_entry' | 'none';
  subjectId: string | null;
  /** The event's data as of now, in the v1 response shape, e.g. `{ reservation }`. */
  data: Record<string, unknown>;
  /** false: a history-only row (see recordHistoryOnlyEvent); only history-only types may be unpublished. */
  published?: boolean;
  /** Who made this change when it is not the transaction's actor (the table optimiser moving a party for a booking). */
  actor?: Actor;
}

export type Emit = (event: NewEvent) => void;

/**
 * Runs a change in one transaction together with the events it emits (the outbox), then
 * enqueues those events. `actor` is recorded in every event row (reservation history). Enqueueing is best effort: the sweeper of worker-timers picks up
 * whatever Redis did not take, so a request never fails or waits because Redis is down. `signal`:
 * the request's (AuthContext.signal), which cancels the transaction once its client has gone.
 * A change's few events (a booking's one or two) are its transaction's last statement, sent in the
 * round trip of its COMMIT (docs/architecture.md "Write path"); more go in statements of their own
 * before it.
 */
export async function transactionWithEvents<T>(
  actor: Actor,
  work: (tx: Tx, emit: Emit) => Promise<T>,
  log: Logger = logger,
  signal?: AbortSignal,
): Promise<T> {
  const pending: NewEvent[] = [];
  // The outbox write's span, which the events' jobs continue (undefined while tracing is off).
  let trace: TraceCarrier | undefined;
  let outboxWrite: ReturnType<typeof insertEventRows> | undefined;
  const writeOutbox = (tx: Tx, withCommit: boolean) =>
    (outboxWrite = inSpan('outbox write', { attributes: { 'floorline.outbox.events': pending.length } }, async () => {
      trace = activeTraceCarrier();
      // Stored with each event (undefined while off: the column is left out of the insert), so that
      // an event the outbox sweep hands back is processed in this trace too.
      const rows = pending.map(({ actor: eventActor, ...event }) => ({ ...event, actor: eventActor ?? actor, traceContext: trace }));
      return insertEventRows(tx, rows, withCommit);
    }));
  const result = await transaction(
    async (tx) => {
      const result = await work(tx, (event) => pending.push(event));
      if (pending.length > preparedEventRows) await writeOutbox(tx, false);
      return result;
    },
    signal,
    { sendWithCommit: (tx) => (pending.length && pending.length <= preparedEventRows ? writeOutbox(tx, true) : undefined) },
  );
  // Settled: transaction() has awaited it after the COMMIT.
  const ids = (outboxWrite ? await outboxWrite : []).filter((r) => r.published);
  if (ids.length) {
    sequenceEventsSoon(new Set(ids.map((e) => e.organisationId)));
    enqueueEvents(trace ? ids.map((e) => ({ ...e, trace })) : ids, log);
  }
  return result;
}

/**
 * A history-only event: imports emit no events (docs/api.md), yet the reservation history shows
 * what an import did. The row is never dispatched (dispatchedAt set), listed or streamed.
 */
export async function recordHistoryOnlyEvent(tx: Tx, event: NewEvent, actor: Actor): Promise<void> {
  await insertEventRows(tx, [{ ...event, published: false, actor }]);
}

/**
 * Inserts a change's events in bounded chunks. Events of one change are 1 ms apart, so that GET
 * /events lists them in the order they were emitted; a history-only row (published false) is never
 * listed, streamed or dispatched (dispatchedAt set at once). `withCommit`: the transaction's last
 * statement, sent with its COMMIT (insertRows' withCommit).
 */
function insertEventRows(tx: Tx, rows: Array<typeof events.$inferInsert>, withCommit = false) {
  return mapInChunks(rows, (chunk, start) =>
    insertRows(tx, events, chunk, {
      computed: {
        createdAt: (_, i) => `clock_timestamp() + interval '${start + i} milliseconds'`,
        dispatchedAt: (row) => (row.published === false ? 'clock_timestamp()' : 'default'),
      },
      withCommit,
      returning: ['id', 'organisationId', 'venueId', 'type', 'published'],
      // A change's few events (a booking's one) as a prepared statement, planned once per connection;
      // a bulk change's chunks are not, so that each connection keeps a bounded set of statements.
      prepare: chunk.length <= preparedEventRows,
    }),
  );
}

/** Up to this many events per statement are inserted by a prepared statement, sent with the COMMIT. */
const preparedEventRows = 4;

/**
 * Events this process committed, or was processing, but could not enqueue (Redis down), sent again as soon as Redis is
 * back instead of waiting for the sweeper's 30 s; bounded, since the sweeper finds them all anyway.
 */
const unsentEvents = new Map<string, EventToEnqueue>();
const maxUnsentEvents = 100_000;
let resendingOnReady = false;

/**
 * jobId = event id: enqueueing the same event twice is harmless. `log`: the request's or job's logger.
 * The events of this process's commits go to Redis in batches (one fair turn per organisation and one
 * round trip for the jobs): after a quiet moment at the end of the commit's turn of the event loop;
 * within batchSpacingMs of the previous batch, batchSpacingMs after it, with what committed
 * meanwhile (docs/architecture.md "Write path").
 */
export function enqueueEvents(rows: EventToEnqueue[], log: Logger = logger): void {
  nextBatch.push({ rows, log });
  if (cancelScheduled) return;
  const wait = lastBatchAt + batchSpacingMs - performance.now();
  if (wait <= 0) {
    const immediate = setImmediate(sendBatch);
    cancelScheduled = () => clearImmediate(immediate);
  } else {
    const timer = setTimeout(sendBatch, wait);
    cancelScheduled = () => clearTimeout(timer);
  }
}

/**
 * A batch follows the previous one by at least this long. A batch costs the process
 * two Redis round trips and BullMQ's client work: about 0.3 ms of its CPU for a single event, 0.1 ms
 * per event in a batch of 20; a web process booking 400 times a second sent batches of one or two
 * (docs/benchmarks.md "The event's enqueue"). An event then waits 25 ms on average, well within a
 * webhook's second.
 */
const batchSpacingMs = 50;
let lastBatchAt = -Infinity;
let cancelScheduled: (() => void) | null = null;
let nextBatch: Array<{ rows: EventToEnqueue[]; log: Logger }> = [];
const sending = new Set<Promise<void>>();

function sendBatch(): void {
  cancelScheduled?.();
  cancelScheduled = null;
  const batch = nextBatch;
  nextBatch = [];
  if (!batch.length) return;
  // A commit within the spacing waits for the next batch, even one of a single commit: bookings one
  // after another at one connection sent a batch each, about 0.3 ms of the process's CPU apiece.
  lastBatchAt = performance.now();
  const sent = addEventJobs(batch.flatMap((b) => b.rows)).then(
    () => {},
    (err: unknown) => {
      for (const { rows, log } of batch) {
        enqueueEventsWhenRedisIsBack(rows);
        log.warn(
          { err: (err as Error).message, eventIds: rows.map((e) => e.id) },
          'events not enqueued; they are sent again when Redis is back',
        );
      }
    },
  );
  sending.add(sent);
  void sent.finally(() => sending.delete(sent));
}

/**
 * Resolves once the events enqueued so far have reached Redis (or failed to): a stopping process
 * waits for it before it closes its queue connection, so that the jobs of its last commits are not
 * left to the sweeper's 30 s.
 */
export async function settleEnqueuedEvents(): Promise<void> {
  sendBatch();
  await Promise.all(sending);
}

/** Remembers events to enqueue again at the next (re)connection to Redis; a duplicate job id is ignored then. */
export function enqueueEventsWhenRedisIsBack(rows: EventToEnqueue[]): void {
  if (!resendingOnReady) {
    onQueueConnectionReady(() => void resendUnsent());
    resendingOnReady = true;
  }
  for (const row of rows) if (unsentEvents.size < maxUnsentEvents) unsentEvents.set(row.id, row);
}

async function resendUnsent(): Promise<void> {
  const ids = [...unsentEvents.values()];
  unsentEvents.clear();
  let sent = 0;
  for (let i = 0; i < ids.length; i += 1000) {
    const chunk = ids.slice(i, i + 1000);
    await addEventJobs(chunk).then(
      () => (sent += chunk.length),
      () => enqueueEventsWhenRedisIsBack(chunk),
    );
  }
  if (sent) logger.info({ events: sent }, 'redis ready: events not enqueued during its absence enqueued now');
}
