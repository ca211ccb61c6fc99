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

/**
 * Every tuning value of the per-destination limit (DestinationSlots, src/services/webhooks/destination-slots.ts),
 * with the reason for it. The limit itself is WEBHOOK_DESTINATION_CONCURRENCY (4 by default), and the
 * longest attempt is the 10 s request timeout; the counts below scale with the limit.
 */
export const destinationSlotTuning = {
  /**
   * A slot's lease runs this long past the longest attempt: a worker that dies holding a slot frees
   * it at most 10 s after its attempt would have ended, while a live attempt delayed by a stalled
   * event loop or a slow Redis round trip does not lose its slot mid-request.
   */
  leaseMarginMs: 10_000,
  /**
   * A waiter list no one added to for two minutes belongs to a destination that went quiet: it
   * disappears on its own. Longer than the longest postponement (a minute), so that the list of a
   * backlog still waiting is not dropped.
   */
  waiterListTtlSeconds: 120,
  /**
   * Of the deliveries due now for one destination in one enqueue, slots × this go to the workers at
   * once (8 for 4 slots): enough to fill the slots and the line waiting in the process behind them;
   * the others are enqueued already postponed. None while jobs are listed for a saturated destination.
   */
  sentAtOncePerSlot: 2,
  /**
   * How long an attempt holds a slot where no worker has measured it (the delays of deliveries
   * enqueued already postponed): on the long side for a healthy partner, so that a release wakes a
   * job before its delay ends rather than the delays bringing the jobs back too early.
   */
  assumedHoldMs: 40,
  /**
   * The longest a job waits in its worker process for a slot: a quick destination (below) releases
   * one of 4 slots every 250 ms at worst, so several releases fall within it; longer would hold the
   * worker's concurrency from other destinations.
   */
  localWaitMs: 2000,
  /** A process with jobs waiting for a destination looks at Redis this often for a slot freed elsewhere (a release by another process wakes no one here). */
  localPollMs: 100,
  /**
   * Jobs wait in the process only for a destination whose attempts (measured here) end within this:
   * a slow or timing-out destination holds its slots for seconds, its jobs are postponed at once.
   */
  quickAttemptMs: 1000,
  /**
   * Before the process has measured a destination's attempts, at most slots × this jobs wait for it
   * in the process (8 for 4 slots): two releases' worth each. Also the length of line that the
   * releases refill by waking postponed jobs.
   */
  localWaitersPerSlot: 2,
  /**
   * Before that measure, jobs waiting in the process hold at most this share of the worker's
   * concurrency, so that other destinations keep the rest while it is unknown whether this one is
   * quick. Measured quick, its line may take the whole concurrency (DestinationSlots.mayWaitHere).
   */
  localWaitersShareOfWorker: 0.5,
  /**
   * A slot handed over keeps its lease while at least three quarters of it are left (15 s of 20 s: the
   * longest attempt and half the margin); a hand-over after that renews it. The hand-overs of a quick
   * destination, many a second, then cost no round trip each.
   */
  renewAfterLeaseShare: 0.25,
  /**
   * A released slot passes straight to a job waiting in the same process at most this many times in
   * a row, then is freed, so that the jobs of other processes get their chance at it (their look at
   * Redis, every localPollMs, against the look of this process's next job). Many: a destination's
   * slots spread over two processes cost each of them a turn of its event loop per answer, claim and
   * outcome, and the delivery more CPU than the same slots passing within one process (about a
   * tenth, docs/benchmarks.md "Hand-overs: 200 in a row"). Freeing more often shares little: the
   * process that frees a slot looks at once for its next job.
   */
  maxHandOvers: 200,
  /** A release wakes the oldest waiter still postponed; entries of jobs that came back on their own are skipped, at most this many per wake-up. */
  wakeTries: 5,
  /**
   * A release wakes two postponed jobs while fewer jobs than the slots wait in the process (the line
   * grows back after it ran dry), one while the line is shorter than its maximum, none when it is full.
   */
  wakesWhileShort: 2,
  wakesWhileFilling: 1,
  /** The weight of the latest attempt in the moving average of how long an attempt holds a slot. */
  holdAverageWeight: 0.2,
  /** The postponement assumes twice the measured hold: a slot also spends time between attempts, and a wake-up comes sooner anyway. */
  measuredHoldFactor: 2,
  /** The doubling postponement (postponementMs) starts here: short enough for a slot released a moment later. */
  firstPostponementMs: 200,
  /** ...and stops doubling here: the jobs of a destination holding its slots for seconds do not spin, and come back within 5 s. */
  longestPostponementMs: 5000,
  /** A job's postponement for its turn behind many others is at most a minute: the delay is a fallback for a lost wake-up. */
  longestQueuedPostponementMs: 60_000,
} as const;

/**
 * How long a job whose destination is saturated waits at most before trying again (the release of a
 * slot usually wakes it sooner), after `postponed` earlier postponements: doubling from 200 ms up to
 * 5 s, so that the jobs of a destination that holds its slots for seconds (a slow or timing-out
 * partner) do not spin, with jitter (`random` in [0, 1)) so that they do not all come back at once.
 */
export function postponementMs(postponed: number, random: number): number {
  const { firstPostponementMs, longestPostponementMs } = destinationSlotTuning;
  const base = Math.min(longestPostponementMs, firstPostponementMs * 2 ** Math.max(0, Math.min(postponed, 10)));
  return Math.round(base * (0.5 + random / 2));
}

/**
 * The postponement of a job whose destination is saturated while `waitersAhead` postponed jobs wait
 * before it and an attempt holds one of its `slots` for `holdMs` on average (unknown: 0): about its
 * turn, so that a long queue behind a healthy destination is not polled every few seconds by each of
 * its jobs (that churn was most of the work of a backlog), the release of every slot still waking
 * the oldest waiter at once. At least postponementMs (the doubling), at most a minute.
 */
export function queuedPostponementMs(input: {
  waitersAhead: number | null;
  holdMs: number;
  slots: number;
  postponed: number;
  random: number;
}): number {
  const turnMs = ((input.waitersAhead ?? 0) * input.holdMs) / input.slots;
  return Math.max(
    postponementMs(input.postponed, input.random),
    Math.min(destinationSlotTuning.longestQueuedPostponementMs, Math.round(turnMs)),
  );
}
