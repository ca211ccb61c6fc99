import { z } from 'zod';
import { takeFairPrioritiesOf } from '../queues/fair-share.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { defaultJobOptions, getQueue } from '../queues/queues.js';

/** worker-events: one outbox event (src/services/events/process-event.ts). */
// The ids besides the event's own are for operators searching Bull Board (jobs of older releases lack them).
const eventJobSchema = z.object({ eventId: z.uuid(), organisationId: z.uuid().optional(), venueId: z.uuid().optional() });
export type EventJob = z.infer<typeof eventJobSchema>;

/**
 * How many event jobs are processed together at most: worker-events runs this many jobs at once,
 * so a backlog goes through in batches of this size (process-event.ts).
 */
export const eventBatchSize = 100;

export const eventJob: JobDefinition<EventJob> = {
  queueName: 'events',
  schema: eventJobSchema,
  fair: true,
  jobOptions: defaultJobOptions,
  // As many jobs at once as one batch holds: the running jobs are processed together.
  workerOptions: { concurrency: eventBatchSize },
};

/** What an event's job is named after and carries: what an operator looks for in Bull Board. */
export interface EventToEnqueue {
  id: string;
  organisationId: string;
  venueId: string;
  type: string;
}

/**
 * Adds the jobs of these events in one call (jobId = event id: enqueueing the same event twice is
 * harmless), named after the event type, each organisation's in its fair turn (src/queues/fair-share.ts).
 */
export async function addEventJobs(rows: EventToEnqueue[]) {
  const priorities = await takeFairPrioritiesOf(eventJob.queueName, rows, (e) => e.organisationId);
  return getQueue(eventJob.queueName).addBulk(
    rows.map((e, i) => ({
      name: e.type,
      data: { eventId: e.id, organisationId: e.organisationId, venueId: e.venueId } satisfies EventJob,
      opts: { ...eventJob.jobOptions, jobId: e.id, priority: priorities[i] },
    })),
  );
}
