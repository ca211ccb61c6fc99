import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { config } from '../../config.js';
import { logger } from '../../logger.js';
import { queueNames } from '../../queues/queue-names.js';
import { getQueue } from '../../queues/queues.js';
import { redisKey } from '../../redis.js';
import { webhookTimeoutMs } from './post-webhook.js';

/**
 * The slots of a destination, shared by every worker-webhooks process (decisions §14.7): a sorted set
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

const freeScript = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], nowMs, '+inf') < tonumber(ARGV[1]) and 1 or 0
`;

type SlotCommands = Redis & {
  acquireDestinationSlot: (key: string, limit: number, leaseMs: number, token: string) => Promise<number>;
  destinationHasFreeSlot: (key: string, limit: number) => Promise<number>;
};

let connection: SlotCommands | undefined;

/**
 * Its own connection, without the 250 ms command timeout of the request path: a slot whose answer
 * timed out would be taken without anyone knowing it. Commands wait while it connects (the first
 * ones of a worker) and fail after one reconnection attempt while Redis is down.
 */
function slotRedis(): SlotCommands {
  if (!connection) {
    const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 1 });
    redis.on('error', () => {});
    redis.defineCommand('acquireDestinationSlot', { numberOfKeys: 1, lua: acquireScript });
    redis.defineCommand('destinationHasFreeSlot', { numberOfKeys: 1, lua: freeScript });
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
 * A postponed job waits in its destination's waiter list (oldest first) as well as in the delayed
 * set: the release of a slot promotes the oldest waiter at once, so that a busy but healthy
 * destination keeps its slots in use; the delay is the fallback if that wake-up is lost.
 */
export async function addDestinationWaiter(destination: string, jobId: string): Promise<void> {
  const key = waitersKey(destination);
  await slotRedis()
    .multi()
    .zadd(key, 'NX', Date.now(), jobId)
    .expire(key, waitersTtlSeconds)
    .exec()
    .catch(() => {}); // the delay brings the job back anyway
}

/** Wakes the oldest waiter still postponed (entries of jobs that came back on their own are skipped). */
async function wakeWaiter(redis: SlotCommands, destination: string): Promise<void> {
  const queue = getQueue(queueNames.webhookDelivery);
  for (let tries = 0; tries < 5; tries++) {
    const [id] = await redis.zpopmin(waitersKey(destination));
    if (!id) return;
    const job = await queue.getJob(id);
    if (job && (await job.promote().then(() => true, () => false))) return;
  }
}

export interface DestinationSlot {
  release: () => Promise<void>;
}

const log = logger.child({ component: 'destination-slots' });

/** A slot no one holds: the limit is not enforced while Redis does not answer (delivery goes on; Redis is only a helper here). */
const unlimited: DestinationSlot = { release: async () => {} };

/** One of the destination's WEBHOOK_DESTINATION_CONCURRENCY slots, or null when they are all taken. */
export async function acquireDestinationSlot(destination: string): Promise<DestinationSlot | null> {
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
  return {
    release: async () => {
      // A failure here is harmless: the lease ends the slot, the delay brings the waiters back.
      await redis.zrem(key, token).catch(() => {});
      await wakeWaiter(redis, destination).catch(() => {});
    },
  };
}

/** A cheap look before the database is read: false when every slot of the destination is taken right now. */
export async function destinationHasFreeSlot(destination: string): Promise<boolean> {
  try {
    return (await slotRedis().destinationHasFreeSlot(slotsKey(destination), config.WEBHOOK_DESTINATION_CONCURRENCY)) === 1;
  } catch {
    return true;
  }
}
