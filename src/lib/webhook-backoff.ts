/**
 * The retry schedule of docs/webhooks.md: attempt 2 one minute after the first failure, 3 five
 * minutes after the second, 4 fifteen minutes after the third, 5 one hour after the fourth.
 */
export const maxDeliveryAttempts = 5;

const waitsAfterFailureMs = [60_000, 5 * 60_000, 15 * 60_000, 60 * 60_000] as const;

/**
 * The wait before the next attempt once attempt `failedAttempt` (1-based) has failed, multiplied by
 * `scale` (1 in production; tests compress the schedule). -1 when no attempt follows: BullMQ then
 * fails the job instead of retrying it.
 */
export function retryDelayMs(failedAttempt: number, scale = 1): number {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1 || failedAttempt >= maxDeliveryAttempts) return -1;
  return Math.round(waitsAfterFailureMs[failedAttempt - 1] * scale);
}

/** How the retry waits of a webhook worker are scaled: 1, the schedule above; tests compress it to see several attempts. */
export interface RetrySchedule {
  backoffScale: number;
}

/** The production schedule. */
export const realRetrySchedule: RetrySchedule = { backoffScale: 1 };

/** An attempt error that names its attempt, so that the backoff follows the delivery's own count. */
export interface NumberedAttemptError extends Error {
  attempt?: number;
}

/**
 * A custom BullMQ backoff strategy (`settings.backoffStrategy` of the worker). BullMQ passes the
 * number of attempts it has made; an error carrying `attempt` wins, because the delivery row also
 * counts attempts interrupted by a crash, which BullMQ does not.
 */
export function webhookBackoffStrategy(scale: number) {
  return (attemptsMade: number, _type?: string, err?: NumberedAttemptError): number => retryDelayMs(err?.attempt ?? attemptsMade, scale);
}
