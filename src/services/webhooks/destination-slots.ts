import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import { redisKey } from '../../redis.js';
import { queuedPostponementMs } from '../../lib/webhook-destination.js';
import { webhookTimeoutMs } from './post-webhook.js';

/**
 * The slots of a destination, shared by every worker-webhooks process (docs/webhooks.md "Isolation per destination"): a sorted set
 * per destination whose members are the attempts under way, scored by the end of their lease. A
 * worker that dies holding a slot cannot leak it: the lease ends 10 s after the longest possible
 * attempt, and expired members are dropped at every acquisition. Redis's clock decides, so workers
 * with skewed clocks agree.
 */
const leaseMs = webhookTimeoutMs + 10_000;

const acquireScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`;

const renewScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', nowMs + tonumber(ARGV[1]), ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`;

const freeScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], nowMs, '+inf') < tonumber(ARGV[1]) and 1 or 0
`;

type SlotCommands = Redis & {
  acquireDestinationSlot: (key: string, limit: number, leaseMs: number, token: string) => Promise<number>;
  destinationHasFreeSlot: (key: string, limit: number) => Promise<number>;
  renewDestinationSlot: (key: string, leaseMs: number, token: string) => Promise<number>;
};

let connection: SlotCommands | undefined;

/**
 * Its own connection, without the 250 ms command timeout of the request path: a slot whose answer
 * timed out would be taken without anyone knowing it. Never a blocking command on it. Commands wait while it connects (the first
 * ones of a worker) and fail after one reconnection attempt while Redis is down.
 */
function slotRedis(): SlotCommands {
  if (!connection) {
    // Auto-pipelining: the commands of the many jobs running at once leave in one write per tick.
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
    redis.on('error', () => {});
    redis.defineCommand('acquireDestinationSlot', { numberOfKeys: 1, lua: acquireScript });
    redis.defineCommand('destinationHasFreeSlot', { numberOfKeys: 1, lua: freeScript });
    redis.defineCommand('renewDestinationSlot', { numberOfKeys: 1, lua: renewScript });
    connection = redis as SlotCommands;
  }
  return connection;
}

export async function closeDestinationSlots(): Promise<void> {
  const redis = connection;
  connection = undefined;
  await redis?.quit().catch(() => redis.disconnect());
}

const slotsKey = (destination: string) => redisKey('webhook-destination', destination);
const waitersKey = (destination: string) => redisKey('webhook-destination-waiters', destination);

/** A waiter list forgotten by everyone (its destination went quiet) disappears on its own. */
const waitersTtlSeconds = 120;

/**
 * How many postponed jobs are ahead of this one in its destination's waiter list: its place if it
 * was postponed before (a job keeps its place), else the length of the list. Null when Redis does
 * not answer.
 */
export async function destinationWaitersAhead(destination: string, jobId: string): Promise<number | null> {
  try {
    const replies = await slotRedis().multi().zrank(waitersKey(destination), jobId).zcard(waitersKey(destination)).exec();
    const [rank, count] = (replies ?? []).map(([, value]) => value as number | null);
    return rank ?? count ?? null;
  } catch {
    return null;
  }
}

/**
 * A postponed job waits in its destination's waiter list (oldest first) as well as in the delayed
 * set: the release of a slot promotes the oldest waiter at once, so that a busy but healthy
 * destination keeps its slots in use; the delay is the fallback if that wake-up is lost. Added once
 * the job is in the delayed set, so that a wake-up never finds it still running.
 */
export async function addDestinationWaiter(destination: string, jobId: string): Promise<void> {
  await addDestinationWaiters(slotRedis(), destination, [jobId]).catch(() => {}); // the delay brings the job back anyway
}

/** How many deliveries due now for one destination go to the workers at once (enqueueDeliveries); the rest are enqueued already postponed. */
export const sentAtOncePerDestination = () => 2 * config.WEBHOOK_DESTINATION_CONCURRENCY;

/** How long an attempt holds a slot, as assumed where no worker measured it (on the long side: a wake-up comes sooner). */
const assumedHoldMs = 40;

/** How many jobs wait for the destination already (the first of the new ones waits behind them); 0 when Redis does not say. */
export async function destinationWaiterCount(connection: Redis, destination: string): Promise<number> {
  return connection.zcard(waitersKey(destination)).catch(() => 0);
}

/** The delay of the `rank`-th job enqueued already postponed behind a destination (its turn, assumed). */
export function prepostponedDelayMs(rank: number): number {
  return queuedPostponementMs({ waitersAhead: rank, holdMs: assumedHoldMs, slots: config.WEBHOOK_DESTINATION_CONCURRENCY, postponed: 0, random: Math.random() });
}

/**
 * Adds jobs to the destination's waiter list, in the given order, behind those already there; a
 * job already listed keeps its place. Used for postponed jobs (addDestinationWaiter) and for the
 * deliveries enqueued together for one destination beyond the first few (enqueueDeliveries), which
 * go straight to the delayed set and this list instead of each being fetched by a worker only to
 * find the destination saturated: a backlog of thousands for one partner then costs nothing while
 * it waits, and the jobs of other destinations are not queued behind it. Called once the jobs
 * exist, so that a wake-up finds them delayed. `connection`: the caller's.
 */
export async function addDestinationWaiters(connection: Redis, destination: string, jobIds: string[]): Promise<void> {
  if (!jobIds.length) return;
  const key = waitersKey(destination);
  const now = Date.now();
  await connection
    .multi()
    .zadd(key, 'NX', ...jobIds.flatMap((id, i) => [now + i / 1000, id]))
    .expire(key, waitersTtlSeconds)
    .exec();
}

/** Moves a postponed (delayed) delivery job to the waiting list now; false when it is not delayed, or not there. */
export async function promoteDeliveryJob(id: string): Promise<boolean> {
  const job = await getQueue(queueNames.webhookDelivery).getJob(id);
  return job ? job.promote().then(() => true, () => false) : false;
}

/** Wakes the oldest waiter still postponed (entries of jobs that came back on their own are skipped). */
async function wakeWaiter(redis: SlotCommands, destination: string): Promise<void> {
  for (let tries = 0; tries < 5; tries++) {
    const [id] = await redis.zpopmin(waitersKey(destination));
    if (!id) return;
    if (await promoteDeliveryJob(id)) return;
  }
}

export interface DestinationSlot {
  release: () => Promise<void>;
}

const log = logger.child({ component: 'destination-slots' });

/** A slot no one holds: the limit is not enforced while Redis does not answer (delivery goes on; Redis is only a helper here). */
const unlimited: DestinationSlot = { release: async () => {} };

/**
 * Waiting here rather than in the delayed set. A job of a saturated destination that has already read
 * its delivery waits in this process for a slot of that destination to be released, and takes it at
 * once: the destination's slots pass from one attempt to the next without the round trips of a
 * postponement (delayed set, wake-up, fetch, database read) in between. Bounded so that waiting can
 * never hold the worker's concurrency from other destinations (docs/webhooks.md "Isolation per destination"): at most
 * `localWaitersPerDestination` jobs per destination, at most half the worker's concurrency in all,
 * at most `localWaitMs` each, and only for a destination whose attempts end quickly (a slow or
 * timing-out one holds its slots for seconds: its jobs are postponed at once).
 */
const localWaitMs = 2000;
/** A waiter not woken by a release of this process (another process released) looks again this often. */
const localPollMs = 100;
const quickAttemptMs = 1000;
const localWaitersPerDestination = () => 2 * config.WEBHOOK_DESTINATION_CONCURRENCY;
let maxLocalWaiters = 25;

/** The worker's concurrency, of which waiting jobs may hold half. */
export function configureDestinationWaiting(workerConcurrency: number): void {
  maxLocalWaiters = Math.max(1, Math.floor(workerConcurrency / 2));
}

/** A waiting job, woken with the slot handed over to it, or with null to try for one itself. */
type Waiter = (handed: DestinationSlot | null) => void;

interface LocalDestination {
  /** Jobs of this process waiting for a slot, oldest first. */
  waiters: Waiter[];
  /** How long this process's attempts held a slot, moving average (ms); undefined before the first. */
  holdMs?: number;
}

const localDestinations = new Map<string, LocalDestination>();
let localWaiters = 0;

function localOf(destination: string): LocalDestination {
  let local = localDestinations.get(destination);
  if (!local) {
    local = { waiters: [] };
    localDestinations.set(destination, local);
  }
  return local;
}

/** Whether a job of this destination may wait for its slot in this process (see localWaitMs). */
export function mayWaitForSlotHere(destination: string): boolean {
  const local = localDestinations.get(destination);
  return localWaiters < maxLocalWaiters && (local?.waiters.length ?? 0) < localWaitersPerDestination() && (local?.holdMs ?? 0) < quickAttemptMs;
}

/** Resolves with a slot handed over by a release of this process, or null after `ms` (to try itself). */
function waitForRelease(destination: string, ms: number): Promise<DestinationSlot | null> {
  const local = localOf(destination);
  return new Promise((resolve) => {
    const wake: Waiter = (handed) => {
      clearTimeout(timer);
      const i = local.waiters.indexOf(wake);
      if (i >= 0) {
        local.waiters.splice(i, 1);
        localWaiters--;
      }
      resolve(handed);
    };
    const timer = setTimeout(() => wake(null), ms);
    local.waiters.push(wake);
    localWaiters++;
  });
}

/** The postponement of a job of this saturated destination: its turn, from this process's measure of its attempts. */
export function destinationPostponementMs(destination: string, waitersAhead: number | null, postponed: number): number {
  // Twice the measured hold: a slot also spends time between attempts, and a wake-up comes sooner anyway.
  const holdMs = 2 * (localDestinations.get(destination)?.holdMs ?? 0);
  return queuedPostponementMs({ waitersAhead, holdMs, slots: config.WEBHOOK_DESTINATION_CONCURRENCY, postponed, random: Math.random() });
}

/**
 * A slot passes straight from the attempt that ends to the oldest job waiting here for the same
 * destination (its lease renewed, without waiting for that), saving the round trips of freeing and
 * taking it again; after this many passes in a row it is freed, so that the jobs of other processes
 * get their share.
 */
const maxHandOvers = 20;

/** One try at one of the destination's WEBHOOK_DESTINATION_CONCURRENCY slots. */
async function tryAcquire(destination: string): Promise<DestinationSlot | null> {
  const key = slotsKey(destination);
  const token = randomUUID();
  const redis = slotRedis();
  try {
    const acquired = await redis.acquireDestinationSlot(key, config.WEBHOOK_DESTINATION_CONCURRENCY, leaseMs, token);
    if (!acquired) return null;
  } catch (err) {
    log.warn({ destination, err: (err as Error).message }, 'destination limit not checked');
    return unlimited;
  }
  return heldSlot(redis, destination, token, 0);
}

function heldSlot(redis: SlotCommands, destination: string, token: string, handOvers: number): DestinationSlot {
  const key = slotsKey(destination);
  const acquiredAt = performance.now();
  return {
    release: async () => {
      const local = localOf(destination);
      const held = performance.now() - acquiredAt;
      local.holdMs = local.holdMs === undefined ? held : 0.8 * local.holdMs + 0.2 * held;
      const next = local.waiters[0];
      if (next && handOvers < maxHandOvers) {
        // A failure to renew is harmless: the lease still has at least the rest of its time.
        void redis.renewDestinationSlot(key, leaseMs, token).catch(() => {});
        next(heldSlot(redis, destination, token, handOvers + 1));
      } else {
        // A failure here is harmless: the lease ends the slot, the delay brings the waiters back.
        await redis.zrem(key, token).catch(() => {});
        local.waiters[0]?.(null);
      }
      // Postponed jobs are woken to take the places of those that leave, so that the next ones are
      // ready when the next slots are released: two while fewer than the destination's slots wait
      // here (the line grows back after it ran dry), one while it is shorter than the most that may
      // wait here, none when it is full. Not awaited: the attempt's outcome is recorded meanwhile.
      const waiting = local.waiters.length;
      const wake = waiting < config.WEBHOOK_DESTINATION_CONCURRENCY ? 2 : waiting < localWaitersPerDestination() ? 1 : 0;
      void (async () => {
        for (let i = 0; i < wake; i++) await wakeWaiter(redis, destination).catch(() => {});
      })();
    },
  };
}

/**
 * One of the destination's WEBHOOK_DESTINATION_CONCURRENCY slots, waiting for one in this process
 * when that is allowed (mayWaitForSlotHere); null when they stay taken: the job is then postponed.
 */
export async function acquireDestinationSlot(destination: string): Promise<DestinationSlot | null> {
  const deadline = Date.now() + localWaitMs;
  for (;;) {
    const slot = await tryAcquire(destination);
    if (slot) return slot;
    const left = deadline - Date.now();
    if (left <= 0 || !mayWaitForSlotHere(destination)) return null;
    const handed = await waitForRelease(destination, Math.min(localPollMs, left));
    if (handed) return handed;
  }
}

/** A cheap look before the database is read: false when every slot of the destination is taken right now. */
export async function destinationHasFreeSlot(destination: string): Promise<boolean> {
  try {
    return (await slotRedis().destinationHasFreeSlot(slotsKey(destination), config.WEBHOOK_DESTINATION_CONCURRENCY)) === 1;
  } catch {
    return true;
  }
}
