import { randomUUID } from 'node:crypto';
import { logger } from '../../logger.js';
import { destinationSlotTuning as tuning, queuedPostponementMs } from '../../lib/webhook-destination.js';
import { closeConnection, type RedisClient } from '../../redis/connections.js';
import { taggedKey } from '../../redis/key-layout.js';
import { runScript, scripts } from '../../redis/scripts.js';
import { webhookTimeoutMs } from './post-webhook.js';

// A destination's two keys share its own hash tag: lineOf reads them in one MULTI, the acquire script takes both.
/** The slots of a destination: a sorted set of the attempts under way (tokens), scored by the end of their lease. */
const slotsKey = (prefix: string, destination: string) => taggedKey(prefix, ['destination', destination], 'slots');
/** The jobs postponed for a destination, scored by when they joined (oldest first). */
const waitersKey = (prefix: string, destination: string) => taggedKey(prefix, ['destination', destination], 'waiters');

/**
 * Adds jobs to a destination's waiter list, in the given order, behind those already there; a job
 * already listed keeps its place.
 */
async function addWaiters(connection: RedisClient, key: string, jobIds: string[]): Promise<void> {
  if (!jobIds.length) return;
  const now = Date.now();
  await connection
    .multi()
    .zadd(key, 'NX', ...jobIds.flatMap((id, i) => [now + i / 1000, id]))
    .expire(key, tuning.waiterListTtlSeconds)
    .exec();
}

/**
 * An attempt's hold on one of its destination's slots, from acquire to release. `token` is its member
 * in the destination's sorted set; null when the limit was not checked (Redis did not answer).
 */
export interface DestinationSlot {
  readonly destination: string;
  readonly token: string | null;
  /** How many times in a row this slot passed from one attempt to the next in this process. */
  readonly handOvers: number;
  readonly acquiredAt: number;
  /** When its lease was last set, at the latest (performance.now() before the command that set it was sent). */
  readonly leaseFrom: number;
}

export interface DestinationSlotsOptions {
  /**
   * Its own connection (purpose `slots` of src/redis/connections.ts), closed by close(): without the
   * request path's command timeout, and never a blocking command on it.
   */
  redis: RedisClient;
  /** The key prefix of the deployment (QUEUE_PREFIX). */
  prefix: string;
  /** WEBHOOK_DESTINATION_CONCURRENCY: attempts at once per destination, across every process. */
  limit: number;
  /** The worker's concurrency, of which jobs waiting in this process for a slot hold at most a share. */
  workerConcurrency: number;
  /** Moves a postponed job to the waiting list now; false when it is no longer delayed, or gone. */
  wake: (jobId: string) => Promise<boolean>;
  /** How long a slot is held at most: the longest attempt plus leaseMarginMs unless given (tests make it short). */
  leaseMs?: number;
}

/** How many jobs wait in a destination's waiter list and how many attempts hold its slots: one round trip. */
async function lineOf(connection: RedisClient, waiters: string, slots: string): Promise<[number, number]> {
  try {
    const replies = (await connection.multi().zcard(waiters).zcard(slots).exec()) ?? [];
    return [Number(replies[0]?.[1] ?? 0), Number(replies[1]?.[1] ?? 0)];
  } catch {
    return [0, 0];
  }
}

/**
 * A job waiting in this process, woken with the slot handed over to it, with `look` to try for one
 * itself (a slot freed here after maxHandOvers), or with null: its wait is over (its time is up, or
 * the destination turned slow).
 */
type Waiter = (woken: DestinationSlot | 'look' | null) => void;

interface LocalDestination {
  /** Jobs of this process waiting for a slot, oldest first. */
  waiters: Waiter[];
  /** How long this process's attempts held a slot, moving average (ms); undefined before the first. */
  holdMs?: number;
  /** How many postponed jobs the last try of this process that found the slots taken found listed. */
  listedAtLastTry: number;
  /** How many jobs this process has postponed since that try: each joined the list behind them. */
  postponedSinceTry: number;
  /** When each attempt of this process holding one of the destination's slots took it (performance.now()), by token. */
  underWay: Map<string, number>;
  /** Whether this process looks at Redis for a slot freed elsewhere, on behalf of its jobs waiting here. */
  looking: boolean;
  /**
   * Jobs of the line served since the last look. Each leaves the destination's waiter list with the
   * next look: listed, it came back on its own (its delay ended before a release woke it), and left
   * there it would hold back the deliveries enqueued after it (holdBack) and cost the wake-ups a take.
   */
  served: string[];
}

/** What holdBack decided for the deliveries of one enqueue. */
export interface HeldBack {
  /** The delay of each delivery enqueued already postponed (about its turn). */
  delays: Map<string, number>;
  /** Adds those deliveries to their destinations' waiter lists; call it once their jobs exist, so that a wake-up finds them delayed. */
  enlist: () => Promise<void>;
}

/**
 * At most `limit` attempts at once per destination (docs/webhooks.md "Isolation per destination"),
 * shared by every worker-webhooks process through Redis; one instance per process (the webhooks
 * role creates it).
 *
 * - **Leases.** A destination's slots are a sorted set whose members are the attempts under way,
 *   scored by the end of their lease (`leaseMs`). A process that dies holding a slot cannot leak it:
 *   expired members are dropped at every acquisition. Redis's clock decides, so processes with
 *   skewed clocks agree. While Redis does not answer, the limit is not enforced (delivery goes on;
 *   Redis is only a helper here).
 * - **Waiting in the process, with hand-over.** A job of a saturated but quick destination waits in
 *   its process (bounded: mayWaitHere) and a slot released here passes straight to the oldest of
 *   those jobs, its lease renewed: no round trips of a postponement in between.
 * - **Postponed for about its turn.** Otherwise the job is postponed (delayed set) and joins the
 *   destination's waiter list; each release wakes the oldest waiters, the delay is the fallback.
 * - **Enqueued already postponed** (holdBack): a burst for one destination beyond the first few goes
 *   straight to the delayed set and the waiter list.
 */
export class DestinationSlots {
  private readonly redis: RedisClient;
  private readonly prefix: string;
  private readonly limit: number;
  private readonly leaseMs: number;
  private readonly wake: (jobId: string) => Promise<boolean>;
  private readonly workerConcurrency: number;
  private readonly maxLocalWaiters: number;
  private readonly local = new Map<string, LocalDestination>();
  private localWaiters = 0;
  /**
   * Of each job whose acquire() just returned null (the caller postpones it next), how many postponed
   * jobs the last try found ahead of it: its postponement needs no round trip of its own to ask.
   */
  private readonly aheadAtLastTry = new Map<string, number>();
  private readonly log = logger.child({ component: 'destination-slots' });

  constructor(options: DestinationSlotsOptions) {
    this.prefix = options.prefix;
    this.limit = options.limit;
    this.leaseMs = options.leaseMs ?? webhookTimeoutMs + tuning.leaseMarginMs;
    this.wake = options.wake;
    this.workerConcurrency = options.workerConcurrency;
    this.maxLocalWaiters = Math.max(1, Math.floor(options.workerConcurrency * tuning.localWaitersShareOfWorker));
    this.redis = options.redis;
    this.redis.on('error', () => {});
  }

  /**
   * One of the destination's slots, waiting for one in this process while that is allowed
   * (mayWaitHere, at most localWaitMs); null when they stay taken: the job (`jobId`) is then postponed.
   */
  async acquire(destination: string, jobId?: string): Promise<DestinationSlot | null> {
    const deadline = Date.now() + tuning.localWaitMs;
    // While jobs of this process wait for the destination its slots are taken, and a slot released here
    // goes to the oldest of them: a new job goes behind them without a try of its own (under a backlog,
    // that try failed for nearly every job), its place in the list the last try's plus those postponed since.
    let ahead = this.hasLineHere(destination) ? this.listedNow(destination) : null;
    for (;;) {
      if (ahead === null) {
        const tried = await this.tryAcquire(destination, jobId);
        if ('token' in tried) return tried;
        ahead = tried.waitersAhead;
        this.noteTry(destination, tried.waitersListed);
      }
      const left = deadline - Date.now();
      if (left <= 0 || !this.mayWaitHere(destination)) {
        if (jobId !== undefined) this.aheadAtLastTry.set(jobId, ahead);
        return null;
      }
      const woken = await this.waitForRelease(destination, left);
      if (woken !== null && woken !== 'look') {
        if (jobId !== undefined) this.localOf(destination).served.push(jobId);
        return woken;
      }
      ahead = woken === 'look' ? null : this.listedNow(destination);
    }
  }

  /**
   * Ends an attempt's hold: the slot passes straight to the oldest job waiting in this process for the
   * same destination (at most maxHandOvers times in a row), else it is freed. Either way postponed
   * jobs are woken to refill the line waiting here. Never throws.
   */
  async release(slot: DestinationSlot): Promise<void> {
    if (slot.token === null) return;
    const { destination, token } = slot;
    const local = this.localOf(destination);
    const held = performance.now() - slot.acquiredAt;
    local.holdMs = local.holdMs === undefined ? held : (1 - tuning.holdAverageWeight) * local.holdMs + tuning.holdAverageWeight * held;
    const next = local.waiters[0];
    // Postponed jobs are woken to take the places of those that leave (the one this release hands a
    // slot to or lets try included), so that the next ones are ready when the next slots are released.
    const waiting = Math.max(0, local.waiters.length - 1);
    const wakes =
      waiting < this.limit ? tuning.wakesWhileShort : waiting < this.localWaitersPerDestination() ? tuning.wakesWhileFilling : 0;
    let taken: Promise<string[]>;
    if (next && slot.handOvers < tuning.maxHandOvers) {
      // Renewed only once a share of the lease has passed (renewAfterLeaseShare): the quick hand-overs
      // of a busy destination cost no round trip. A failure to renew is harmless: the lease still has
      // at least the rest of its time.
      let { leaseFrom } = slot;
      if (performance.now() - leaseFrom > this.leaseMs * tuning.renewAfterLeaseShare) {
        leaseFrom = performance.now();
        void runScript(this.redis, scripts.renewDestinationSlot, [slotsKey(this.prefix, destination)], [this.leaseMs, token]).catch(
          () => {},
        );
      }
      next(this.held(destination, token, slot.handOvers + 1, leaseFrom));
      taken = wakes ? this.redis.zpopmin(waitersKey(this.prefix, destination), wakes).then(idsOfPopped) : Promise.resolve([]);
    } else {
      taken = this.free(destination, token, wakes);
      await taken;
      next?.('look');
    }
    // Not awaited: the attempt's outcome is recorded meanwhile.
    void (async () => {
      for (const id of await taken.catch(() => []))
        if (!(await this.wake(id).catch(() => false))) await this.wakeOldest(destination, tuning.wakeTries - 1).catch(() => {});
    })();
  }

  /**
   * Postpones a job of a saturated destination for about its turn among the jobs waiting for it
   * (from this process's measure of its attempts and the place its last acquire() found; without one,
   * the doubling postponement): `moveToDelayed` is called with the delay, then the job joins the
   * destination's waiter list (once it is delayed, so that a wake-up never finds it still running).
   * A job postponed before keeps its place in the list.
   */
  async postpone(destination: string, jobId: string, postponed: number, moveToDelayed: (delayMs: number) => Promise<void>): Promise<void> {
    const ahead = this.aheadAtLastTry.get(jobId) ?? null;
    this.aheadAtLastTry.delete(jobId);
    const local = this.localOf(destination);
    local.postponedSinceTry++;
    const holdMs = tuning.measuredHoldFactor * (local.holdMs ?? 0);
    await moveToDelayed(queuedPostponementMs({ waitersAhead: ahead, holdMs, slots: this.limit, postponed, random: Math.random() }));
    await addWaiters(this.redis, waitersKey(this.prefix, destination), [jobId]).catch(() => {}); // the delay brings the job back anyway
  }

  async close(): Promise<void> {
    await closeConnection(this.redis);
  }

  /**
   * enqueueDeliveries' side of the limit, with the caller's connection: of the deliveries due now for
   * each destination (in order), the first limit × sentAtOncePerSlot go to the workers at once; the
   * others are enqueued already postponed, behind the destination's waiters, delayed for about their
   * turn (assumedHoldMs per attempt). A backlog of thousands for one partner then neither passes
   * through a worker one by one to be postponed nor queues ahead of other partners' jobs.
   */
  static async holdBack(
    connection: RedisClient,
    byDestination: Map<string, string[]>,
    keys: { prefix: string; limit: number },
  ): Promise<HeldBack> {
    const delays = new Map<string, number>();
    const lists: Array<[string, string[]]> = [];
    for (const [destination, ids] of byDestination) {
      const key = waitersKey(keys.prefix, destination);
      // The jobs already listed, and the attempts under way (expired leases included: they go at the
      // next acquisition); 0 when Redis does not say.
      const [listed, underWay] = await lineOf(connection, key, slotsKey(keys.prefix, destination));
      // While jobs wait for a saturated destination, a new one goes behind them: sent now, it would
      // only find the slots taken and be postponed (or wait in a worker) ahead of older jobs.
      const sentNow = listed > 0 && underWay >= keys.limit ? 0 : keys.limit * tuning.sentAtOncePerSlot;
      const later = ids.slice(sentNow);
      if (!later.length) continue;
      // Ahead of the first of them: the listed jobs, the attempts under way and those sent now.
      const ahead = listed + underWay + sentNow;
      later.forEach((id, i) =>
        delays.set(
          id,
          queuedPostponementMs({
            waitersAhead: ahead + i,
            holdMs: tuning.assumedHoldMs,
            slots: keys.limit,
            postponed: 0,
            random: Math.random(),
          }),
        ),
      );
      lists.push([key, later]);
    }
    return {
      delays,
      // The delay brings them back should this fail.
      enlist: async () => {
        for (const [key, ids] of lists) await addWaiters(connection, key, ids).catch(() => {});
      },
    };
  }

  /**
   * One round trip frees the slot and takes up to `wakes` waiters to wake. A failure here is harmless:
   * the lease ends the slot, the delay brings the waiters back. A slot is under way in this process
   * from held() (its take, or a hand-over) to here, whoever frees it: a slot freed without leaving
   * `underWay` would pass for an attempt running past quickAttemptMs, and every job of the destination
   * that found its slots taken would be postponed at once, for as long as the process lives.
   */
  private free(destination: string, token: string, wakes: number): Promise<string[]> {
    this.localOf(destination).underWay.delete(token);
    return runScript(
      this.redis,
      scripts.releaseDestinationSlot,
      [slotsKey(this.prefix, destination), waitersKey(this.prefix, destination)],
      [token, wakes],
    ).catch(() => []);
  }

  private localOf(destination: string): LocalDestination {
    let local = this.local.get(destination);
    if (!local) {
      local = { waiters: [], listedAtLastTry: 0, postponedSinceTry: 0, underWay: new Map(), looking: false, served: [] };
      this.local.set(destination, local);
    }
    return local;
  }

  private localWaitersPerDestination(): number {
    return tuning.localWaitersPerSlot * this.limit;
  }

  private hasLineHere(destination: string): boolean {
    return (this.local.get(destination)?.waiters.length ?? 0) > 0;
  }

  /** The jobs postponed for the destination as this process last saw them: the last failed try's count and its own postponements since. */
  private listedNow(destination: string): number {
    const local = this.localOf(destination);
    return local.listedAtLastTry + local.postponedSinceTry;
  }

  private noteTry(destination: string, listed: number): void {
    const local = this.localOf(destination);
    local.listedAtLastTry = listed;
    local.postponedSinceTry = 0;
  }

  /**
   * Whether this process's attempts at the destination end slowly: on average (measured at their
   * releases), or one under way now has run longer than a quick attempt (a destination turning slow
   * shows there first).
   */
  private isSlow(local: LocalDestination): boolean {
    if ((local.holdMs ?? 0) >= tuning.quickAttemptMs) return true;
    const now = performance.now();
    for (const acquiredAt of local.underWay.values()) if (now - acquiredAt >= tuning.quickAttemptMs) return true;
    return false;
  }

  /**
   * Whether a job of this destination may wait for its slot in this process: only for a destination
   * whose attempts end quickly. Once this process has measured them so, its line may take the worker's
   * whole concurrency: each hand-over ends an attempt within a moment, and the job that takes the
   * freed place is the first of the queue's fair order, another organisation's before this backlog;
   * a job that found no place here would be postponed, and under a backlog released at once the
   * worker would take and postpone job after job (a run each, and another when it comes back).
   * Before a measure, bounded so that waiting can never hold the worker's concurrency from other
   * destinations (per destination, in all).
   */
  private mayWaitHere(destination: string): boolean {
    const local = this.localOf(destination);
    if (this.isSlow(local)) return false;
    if (local.holdMs !== undefined) return this.localWaiters < this.workerConcurrency;
    return this.localWaiters < this.maxLocalWaiters && local.waiters.length < this.localWaitersPerDestination();
  }

  /**
   * While jobs wait here for the destination, looks at Redis every localPollMs for a slot freed by
   * another process (a release there wakes no one here) and gives it to the oldest of them: one look
   * for the line, not one per job. Ends the wait of the line once the destination turns slow.
   */
  private lookForFreedSlots(destination: string): void {
    const local = this.localOf(destination);
    if (local.looking) return;
    local.looking = true;
    void (async () => {
      // The flag is lowered in the same turn as the last look ends (not a promise's turn later), so that
      // a job joining the line then starts the looks again.
      try {
        // After a slot found, the next look comes at once: the other process may have freed several.
        let found = false;
        while (local.waiters.length) {
          if (!found) await new Promise((resolve) => setTimeout(resolve, tuning.localPollMs));
          if (!local.waiters.length) break;
          this.unlistServed(destination, local);
          if (this.isSlow(local)) {
            for (const waiter of [...local.waiters]) waiter(null);
            break;
          }
          const tried = await this.tryAcquire(destination);
          found = 'token' in tried;
          if (!('token' in tried)) this.noteTry(destination, tried.waitersListed);
          else if (local.waiters.length) local.waiters[0](tried);
          else if (tried.token !== null) await this.free(destination, tried.token, 0); // the line was served meanwhile
        }
      } finally {
        local.looking = false;
        this.unlistServed(destination, local);
      }
    })();
  }

  /** Takes the jobs of the line served since the last look off the destination's waiter list (LocalDestination.served). */
  private unlistServed(destination: string, local: LocalDestination): void {
    if (!local.served.length) return;
    void this.redis.zrem(waitersKey(this.prefix, destination), ...local.served.splice(0)).catch(() => 0); // left listed, a wake-up finds it running and skips it
  }

  /** One try at one of the destination's slots; not taken, how many postponed jobs are ahead of the job and listed in all. */
  private async tryAcquire(destination: string, jobId = ''): Promise<DestinationSlot | { waitersAhead: number; waitersListed: number }> {
    const token = randomUUID();
    const leaseFrom = performance.now();
    try {
      const [taken, waitersAhead = 0, waitersListed = 0] = await runScript(
        this.redis,
        scripts.acquireDestinationSlot,
        [slotsKey(this.prefix, destination), waitersKey(this.prefix, destination)],
        [this.limit, this.leaseMs, token, jobId],
      );
      if (!taken) return { waitersAhead, waitersListed };
    } catch (err) {
      this.log.warn({ destination, err: (err as Error).message }, 'destination limit not checked');
      return { destination, token: null, handOvers: 0, acquiredAt: performance.now(), leaseFrom };
    }
    return this.held(destination, token, 0, leaseFrom);
  }

  private held(destination: string, token: string, handOvers: number, leaseFrom: number): DestinationSlot {
    const acquiredAt = performance.now();
    this.localOf(destination).underWay.set(token, acquiredAt);
    return { destination, token, handOvers, acquiredAt, leaseFrom };
  }

  /** Resolves with what wakes the job in line (Waiter), null after `ms`. */
  private waitForRelease(destination: string, ms: number): Promise<DestinationSlot | 'look' | null> {
    const local = this.localOf(destination);
    const woken = new Promise<DestinationSlot | 'look' | null>((resolve) => {
      const wake: Waiter = (handed) => {
        clearTimeout(timer);
        const i = local.waiters.indexOf(wake);
        if (i >= 0) {
          local.waiters.splice(i, 1);
          this.localWaiters--;
        }
        resolve(handed);
      };
      const timer = setTimeout(() => wake(null), ms);
      local.waiters.push(wake);
      this.localWaiters++;
    });
    this.lookForFreedSlots(destination);
    return woken;
  }

  /** Wakes the oldest waiter still postponed, in up to `tries` takes (entries of jobs that came back on their own are skipped). */
  private async wakeOldest(destination: string, tries: number): Promise<void> {
    for (let i = 0; i < tries; i++) {
      const [id] = await this.redis.zpopmin(waitersKey(this.prefix, destination));
      if (!id) return;
      if (await this.wake(id)) return;
    }
  }
}

/** The members of a ZPOPMIN reply (member, score, member, score…). */
function idsOfPopped(reply: string[]): string[] {
  return reply.filter((_, i) => i % 2 === 0);
}
