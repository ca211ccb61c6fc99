import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { behindTheLine } from '../queues/fair-share.js';
import type { JobHandler } from '../queues/job-definition.js';
import type { DestinationSlots } from '../services/webhooks/destination-slots.js';
import {
  deliverWebhookJob,
  type DeliveryJobControl,
  type DeliveryOutcome,
  type DeliveryWorker,
} from '../services/webhooks/deliver-webhook-job.js';
import type { WebhookDeliveryJob } from '../jobs/webhook-delivery-job.js';

/**
 * A failed attempt is the partner's doing, not a fault of this code: its error is one line, and its
 * stack is that line too (Error.stack is writable), so that Bull Board shows no stack trace for it.
 * An exception of our own code keeps its stack.
 */
function oneLine<E extends Error>(err: E): E {
  err.stack = err.message;
  return err;
}

/** A failed attempt that names its number, read by the custom backoff strategy (src/lib/webhook-backoff.ts). */
class AttemptFailed extends Error {
  constructor(
    readonly attempt: number,
    message: string,
  ) {
    super(message);
    oneLine(this);
  }
}

/**
 * How many earlier runs of a job ended without consuming an attempt (moved to the delayed set: a
 * postponement): BullMQ's count of the job's runs (`attemptsStarted`, this one included) less this run
 * and those whose failure consumed an attempt (`attemptsMade`).
 */
export function runsWithoutAttemptOf(job: Pick<Job, 'attemptsStarted' | 'attemptsMade'>): number {
  return Math.max(0, job.attemptsStarted - 1 - job.attemptsMade);
}

/** The steps' view of the BullMQ job: its data, and the moves they may make with the worker's lock token. */
function controlOf(payload: WebhookDeliveryJob, job: Job<WebhookDeliveryJob>, token: string | undefined): DeliveryJobControl {
  return {
    id: job.id!,
    data: payload,
    runsWithoutAttempt: runsWithoutAttemptOf(job),
    updateData: (data) => job.updateData(data),
    // A job enqueued already postponed, or postponed before, is behind the line already: no round trip.
    moveBehindTheLine: async () => {
      if (job.priority !== behindTheLine) await job.changePriority({ priority: behindTheLine });
    },
    moveToDelayed: (at) => job.moveToDelayed(at, token),
    log: (line) => job.log(line),
  };
}

/** The outcome of the steps, told to BullMQ: returning completes the job, each error moves it. */
async function settle(outcome: DeliveryOutcome, job: Job<WebhookDeliveryJob>, token: string | undefined): Promise<void> {
  switch (outcome.kind) {
    case 'delivered':
      return;
    case 'discarded':
      // Failed for good (the discard list of Bull Board), or nothing to send: completed and removed.
      if (outcome.message !== null) throw oneLine(new UnrecoverableError(outcome.message));
      return;
    case 'postponed':
      // The steps have moved it to the delayed set already.
      throw new DelayedError();
    case 'retry':
      if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw new AttemptFailed(outcome.attempt, outcome.message);
      // BullMQ has no attempts left for this job (a Bull Board retry keeps its count): scheduled here.
      await job.moveToDelayed(outcome.at.getTime(), token);
      throw new DelayedError();
  }
}

/** worker-webhooks: one attempt of one delivery, within the per-destination limit of this process (`slots`). */
export function createWebhookDeliveryHandler(slots: DestinationSlots, worker: DeliveryWorker): JobHandler<WebhookDeliveryJob> {
  return async (payload, job, log, token) =>
    settle(await deliverWebhookJob(slots, controlOf(payload, job, token), log, worker), job, token);
}
