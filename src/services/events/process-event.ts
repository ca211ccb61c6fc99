import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import type { Job } from 'bullmq';
import { eq, sql } from 'drizzle-orm';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import { eventJobSchema } from '../../queues/job-payloads.js';
import { isQueueConnectionReady } from '../../queues/queues.js';
import { runAutomations } from '../automations/run-automations.js';
import { offerFreedTable } from '../waitlist/offer-freed-table.js';
import { enqueueEventsWhenRedisIsBack } from './outbox.js';

// Prepared once: they run for every event.
const selectEvent = db
  .select()
  .from(events)
  .where(eq(events.id, sql.placeholder('id')))
  .prepare('select_outbox_event');
const markDispatched = db
  .update(events)
  .set({ dispatchedAt: sql`clock_timestamp()` })
  .where(eq(events.id, sql.placeholder('id')))
  .prepare('mark_event_dispatched');

/**
 * worker-events: consumes one outbox event, then marks it dispatched so the sweeper leaves it alone.
 * Every step is idempotent: a job that runs twice (sweeper, crash before the mark) changes nothing.
 */
export async function processEventJob(job: Job, _token?: string, log: Logger = logger): Promise<void> {
  const { eventId } = eventJobSchema.parse(job.data);
  const [event] = await selectEvent.execute({ id: eventId });
  if (!event || event.dispatchedAt) return;
  try {
    await runAutomations(event);
  } catch (err) {
    // Redis went away while the deliveries were enqueued: this job may be lost with it (an emptied
    // Redis), so the event is enqueued again as soon as Redis is back rather than after the sweeper's 30 s.
    if (!isQueueConnectionReady()) enqueueEventsWhenRedisIsBack([eventId]);
    throw err;
  }
  // Waiting list: a reservation event that freed a table may offer it to a waiting party.
  await offerFreedTable(event, log);
  await markDispatched.execute({ id: eventId });
}
