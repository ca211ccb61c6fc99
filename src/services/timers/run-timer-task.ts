import type { Job } from 'bullmq';
import { logger } from '../../logger.js';
import { timerJobSchema, type TimerJob } from '../../queues/job-payloads.js';
import { sweepOutbox } from '../events/sweep-outbox.js';
import { purgeExpiredIdempotencyKeys } from '../idempotency/idempotency-store.js';
import { purgeTrashedGuests } from '../guests/guest-service.js';
import { requeueStalledImports } from '../imports/import-service.js';

const tasks: Record<TimerJob['task'], () => Promise<unknown>> = {
  'outbox-sweep': async () => ({
    events: await sweepOutbox(),
    stalledImports: await requeueStalledImports(),
  }),
  'daily-purge': async () => ({
    idempotencyKeys: await purgeExpiredIdempotencyKeys(),
    trashedGuests: await purgeTrashedGuests(),
  }),
  'late-no-show': async () => 0,
  'waitlist-expiry': async () => 0,
};

export async function runTimerJob(job: Job): Promise<void> {
  const { task } = timerJobSchema.parse(job.data);
  const result = await tasks[task]();
  logger.debug({ task, result }, 'timer task done');
}
