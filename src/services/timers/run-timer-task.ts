import type { Logger } from 'pino';
import type { TimerTask } from '../../jobs/timer-job.js';
import { sweepOutbox } from '../outbox/sweep-outbox.js';
import type { DeliveryQueueSettings } from '../webhooks/enqueue-deliveries.js';
import { sweepDeliveries } from '../webhooks/sweep-deliveries.js';
import { purgeExpiredIdempotencyKeys } from '../idempotency/idempotency-store.js';
import { purgeTrashedGuests } from '../guests/guest-service.js';
import { purgeExpiredHolds } from '../holds/hold-service.js';
import { requeueStalledImports } from '../imports/import-service.js';
import { expireWaitlistEntries } from '../waitlist/waitlist-service.js';
import { learnStaleTurnTimes } from '../turn-times/learned-turn-times.js';
import { analyzeChangedTables } from './analyze-tables.js';
import { markNoShows, notifyLateReservations } from './late-reservations.js';
import { purgeConcludedDeliveries } from './purge-deliveries.js';

const tasks: Record<TimerTask, (log: Logger, settings: DeliveryQueueSettings) => Promise<unknown>> = {
  'outbox-sweep': async (_log, settings) => ({
    events: await sweepOutbox(),
    // Webhook deliveries are swept on the same beat: their rows are an outbox of their own.
    deliveries: await sweepDeliveries(settings),
    stalledImports: await requeueStalledImports(),
  }),
  'daily-purge': async () => ({
    idempotencyKeys: await purgeExpiredIdempotencyKeys(),
    trashedGuests: await purgeTrashedGuests(),
    concludedDeliveries: await purgeConcludedDeliveries(),
    expiredWaitlistEntries: await expireWaitlistEntries(),
    // Expired holds already occupy nothing; this only keeps the table small.
    expiredHolds: await purgeExpiredHolds(),
  }),
  // Late first: a reservation past both tolerances (timers were down) is announced late, then no_show.
  'late-no-show': async (log) => ({ late: await notifyLateReservations(log), noShows: await markNoShows(log) }),
  'waitlist-expiry': async () => ({ expiredWaitlistEntries: await expireWaitlistEntries() }),
  'analyze-tables': async () => ({ analysed: await analyzeChangedTables() }),
  // docs/reservations.md "Turn times and wait quotes": the venues whose last 8 weeks changed.
  'learn-turn-times': async () => ({ learnedVenues: await learnStaleTurnTimes() }),
};

export async function runTimerTask(task: TimerTask, log: Logger, settings: DeliveryQueueSettings): Promise<void> {
  const result = await tasks[task](log, settings);
  log.debug({ task, result }, 'timer task done');
}
