/**
 * Delivery isolation (docs/webhooks.md "Isolation per destination"): attempts are limited per destination, the normalised origin
 * of the URL (scheme, lower-case host, port only when not the scheme's default), so that two paths
 * of one partner share its limit and two partners never share one.
 */
export function destinationOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

const firstPostponementMs = 200;
const longestPostponementMs = 5000;

/**
 * How long a job whose destination is saturated waits at most before trying again (the release of a
 * slot usually wakes it sooner), after `postponed` earlier postponements: doubling from 200 ms up to
 * 5 s, so that the jobs of a destination that holds its slots for seconds (a slow or timing-out
 * partner) do not spin, with jitter (`random` in [0, 1)) so that they do not all come back at once.
 */
export function postponementMs(postponed: number, random: number): number {
  const base = Math.min(longestPostponementMs, firstPostponementMs * 2 ** Math.max(0, Math.min(postponed, 10)));
  return Math.round(base * (0.5 + random / 2));
}

const longestQueuedPostponementMs = 60_000;

/**
 * The postponement of a job whose destination is saturated while `waitersAhead` postponed jobs wait
 * before it and an attempt holds one of its `slots` for `holdMs` on average (unknown: 0): about its
 * turn, so that a long queue behind a healthy destination is not polled every few seconds by each of
 * its jobs (that churn was most of the work of a backlog), the release of every slot still waking
 * the oldest waiter at once. At least postponementMs (the doubling), at most a minute.
 */
export function queuedPostponementMs(input: { waitersAhead: number | null; holdMs: number; slots: number; postponed: number; random: number }): number {
  const turnMs = ((input.waitersAhead ?? 0) * input.holdMs) / input.slots;
  return Math.max(postponementMs(input.postponed, input.random), Math.min(longestQueuedPostponementMs, Math.round(turnMs)));
}
