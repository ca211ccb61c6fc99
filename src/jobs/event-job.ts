import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { processConfig } from '../config.js';
import { takeFairTurnsOf } from '../queues/fair-share.js';
import type { JobDefinition } from '../queues/job-definition.js';
import { addJobs, defaultJobOptions, getQueue } from '../queues/queues.js';
import type { TraceCarrier } from '../tracing/tracing.js';

/** worker-events: one outbox event (src/services/event-processing/process-event.ts). */
// The ids besides the event's own are for operators searching Bull Board (jobs of older releases lack them).
// `trace`: the span of the outbox write that committed the event, which its processing continues
// (W3C headers; only while tracing is on: docs/operations.md "Tracing").
const eventJobSchema = z.object({
  eventId: z.uuid(),
  organisationId: z.uuid().optional(),
  venueId: z.uuid().optional(),
  trace: z.record(z.string(), z.string()).optional(),
});
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
  /** The span that committed it, while tracing is on. */
  trace?: TraceCarrier;
}

/** A larger enqueue is added in chunks of this many jobs, each followed by a pause three times as long as it took. */
const enqueueChunk = 500;

/**
 * Adds the jobs of these events (jobId = event id: enqueueing the same event twice is harmless),
 * named after the event type, each organisation's in its fair turn and at its pace
 * (src/queues/fair-share.ts). A bulk of thousands goes in chunks with pauses between them: added at
 * once, the jobs of 20,000 events took both cores (this process's and Redis's) for two seconds,
 * stalling every other organisation's work, though most of them are not due for a minute.
 */
export async function addEventJobs(rows: EventToEnqueue[]): Promise<void> {
  const pace =
    processConfig().EVENT_PACING_RATE > 0
      ? { perSecond: processConfig().EVENT_PACING_RATE, burst: processConfig().EVENT_PACING_BURST }
      : undefined;
  let pause = 0;
  for (let start = 0; start < rows.length; start += enqueueChunk) {
    if (pause) await sleep(pause);
    const startedAt = Date.now();
    const chunk = rows.slice(start, start + enqueueChunk);
    const turns = await takeFairTurnsOf(eventJob.queueName, chunk, (e) => e.organisationId, pace);
    const jobs = chunk.map((e, i) => ({
      name: e.type,
      data: { eventId: e.id, organisationId: e.organisationId, venueId: e.venueId, trace: e.trace } satisfies EventJob,
      opts: { ...eventJob.jobOptions, jobId: e.id, ...turns[i] },
    }));
    await addJobs(getQueue(eventJob.queueName), jobs);
    pause = 3 * (Date.now() - startedAt);
  }
}
