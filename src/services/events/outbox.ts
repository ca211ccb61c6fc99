import { sql } from 'drizzle-orm';
import { db, type Tx } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { logger } from '../../logger.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import type { EventType } from '../../lib/event-catalogue.js';

export interface NewEvent {
  organisationId: string;
  venueId: string;
  livemode: boolean;
  type: EventType;
  subjectType: 'reservation' | 'guest' | 'waitlist_entry' | 'none';
  subjectId: string | null;
  /** The event's data as of now, in the v1 response shape, e.g. `{ reservation }`. */
  data: Record<string, unknown>;
}

export type Emit = (event: NewEvent) => void;

/**
 * Runs a change in one transaction together with the events it emits (the outbox), then
 * enqueues those events. Enqueueing is best effort: the sweeper of worker-timers picks up
 * whatever Redis did not take, so a request never fails or waits because Redis is down.
 */
export async function transactionWithEvents<T>(work: (tx: Tx, emit: Emit) => Promise<T>): Promise<T> {
  const pending: NewEvent[] = [];
  const { result, ids } = await db.transaction(async (tx) => {
    const result = await work(tx, (event) => pending.push(event));
    // Events of one change are 1 ms apart, so that GET /events lists them in the order they were emitted.
    const rows = pending.map((event, i) => ({ ...event, createdAt: sql`clock_timestamp() + make_interval(secs => ${i / 1000})` }));
    const ids = rows.length ? (await tx.insert(events).values(rows).returning({ id: events.id })).map((r) => r.id) : [];
    return { result, ids };
  });
  if (ids.length) enqueueEvents(ids);
  return result;
}

/** jobId = event id: enqueueing the same event twice is harmless. */
export function enqueueEvents(ids: string[]): void {
  const queue = getQueue(queueNames.events);
  queue
    .addBulk(ids.map((eventId) => ({ name: 'event', data: { eventId }, opts: { jobId: eventId } })))
    .catch((err: unknown) => logger.warn({ err: (err as Error).message, eventIds: ids }, 'events not enqueued; the outbox sweeper will retry'));
}
