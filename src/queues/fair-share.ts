import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { config } from '../config.js';
import { groupBy } from '../lib/group-by.js';
import { getQueue, getQueueConnection } from './queues.js';

/**
 * Fair queues (docs/architecture.md "Fair queues"): start-time fair queuing on BullMQ's open-source
 * job priorities. Each queue keeps a virtual time, the priority of the last job a worker started;
 * each organisation keeps the tag of its last enqueued job. A new job's priority is one past the
 * larger of the two. An organisation that enqueues 20,000 jobs at once takes tags t+1…t+20000;
 * another organisation's job enqueued meanwhile gets about the current virtual time + 1, so it
 * runs after the jobs already started, not after the backlog; two busy organisations take turns.
 * Within one organisation the tags only grow, so its jobs keep their order.
 *
 * A tag is a place in the line of jobs ready to run. A job that waits in the delayed set is out of
 * that line, and BullMQ gives it back its stored priority when it returns: with a tag, it would come
 * back ahead of every job tagged while it waited, since the virtual time has passed its tag. So a
 * delivery enqueued delayed, or put in the delayed set to wait for its saturated destination, takes
 * `behindTheLine` instead: it returns after the jobs in line and does not move the virtual time.
 *
 * Every job of a fair queue carries a priority: BullMQ runs a job without one before all others.
 */

/** BullMQ's lowest priority (the largest number it accepts: PRIORITY_LIMIT, 2^21 - 1). */
export const lowestPriority = 2 ** 21 - 1;

/**
 * The priority of a delivery that waits in the delayed set (enqueued delayed, or postponed by its
 * saturated destination): when it returns, it runs after the jobs in line, in the order the jobs
 * came back. Mostly it waits for its destination: a worker taken ahead of the line would only find
 * the destination saturated again.
 */
export const behindTheLine = lowestPriority;

/**
 * An organisation's tag (and a count's virtual time) is forgotten after this long without use: by
 * then the virtual time has passed it, unless the queue was idle, when it would only penalise the
 * organisation.
 */
const organisationTagSeconds = 3600;

interface FairCommands {
  takeFairTags: (key: string, count: number, lifetimeSeconds: number, organisationId: string) => Promise<number>;
  advanceFairVirtualTime: (key: string, priority: number, lifetimeSeconds: number) => Promise<number>;
  restartFairCountIfHigh: (key: string, after: number) => Promise<number>;
}
const withCommands = new WeakSet<Redis>();

/**
 * The queues' connection once ready (it queues no command while connecting), with the scripts below
 * as commands: ioredis sends a script's hash (EVALSHA), and its text only when Redis does not know
 * it (after a restart), where EVAL sent the text with every job.
 */
async function redisOf(queue: string): Promise<Redis & FairCommands> {
  await getQueue(queue).waitUntilReady();
  const redis = getQueueConnection();
  if (!withCommands.has(redis)) {
    redis.defineCommand('takeFairTags', { numberOfKeys: 1, lua: takeTagsScript });
    redis.defineCommand('advanceFairVirtualTime', { numberOfKeys: 1, lua: advanceScript });
    redis.defineCommand('restartFairCountIfHigh', { numberOfKeys: 1, lua: restartScript });
    withCommands.add(redis);
  }
  return redis as Redis & FairCommands;
}

const keyOf = (queue: string) => `${config.QUEUE_PREFIX}:fair:${queue}`;

// The keys of one count are `<base>:<epoch>:…`: restarting the count is one INCR, and the keys of
// the old count expire by themselves. KEYS: the queue's base key. ARGV: how many jobs, the tag's
// lifetime, the organisation. Returns the first tag of the batch; the batch takes it and the next
// count - 1.
const takeTagsScript = `
local base = KEYS[1] .. ':' .. (redis.call('GET', KEYS[1] .. ':epoch') or '0')
local vt = tonumber(redis.call('GET', base .. ':virtual-time') or '0')
local organisation = base .. ':organisation:' .. ARGV[3]
local last = tonumber(redis.call('GET', organisation) or '0')
local first = math.max(vt, last) + 1
redis.call('SET', organisation, first + tonumber(ARGV[1]) - 1, 'EX', ARGV[2])
return first`;

// KEYS: the queue's base key. ARGV: the priority of a job that starts, the key's lifetime.
const advanceScript = `
local key = KEYS[1] .. ':' .. (redis.call('GET', KEYS[1] .. ':epoch') or '0') .. ':virtual-time'
if tonumber(ARGV[1]) > tonumber(redis.call('GET', key) or '0') then redis.call('SET', key, ARGV[1], 'EX', ARGV[2]) end
return 0`;

/**
 * The priorities of `count` jobs of one organisation, in the order they are to run. Past BullMQ's
 * range they stay at its lowest priority, where BullMQ keeps insertion order: a queue that never
 * drains over two million jobs degrades to first come, first served, never to disorder.
 */
export async function takeFairPriorities(queue: string, organisationId: string, count: number): Promise<number[]> {
  if (count === 0) return [];
  const first = Number(await (await redisOf(queue)).takeFairTags(keyOf(queue), count, organisationTagSeconds, organisationId));
  return Array.from({ length: count }, (_, i) => Math.min(lowestPriority, first + i));
}

/** The priorities of jobs of several organisations, each organisation's in the order given. */
export async function takeFairPrioritiesOf<T>(queue: string, items: readonly T[], organisationOf: (item: T) => string): Promise<number[]> {
  // Indexes grouped, not copied per item: one batch may hold an organisation's 20,000 jobs.
  const byOrganisation = groupBy(items.map((_, i) => i), (i) => organisationOf(items[i]));
  const priorities = new Array<number>(items.length);
  await Promise.all(
    [...byOrganisation].map(async ([organisationId, indexes]) => {
      const taken = await takeFairPriorities(queue, organisationId, indexes.length);
      indexes.forEach((index, k) => (priorities[index] = taken[k]));
    }),
  );
  return priorities;
}

/**
 * Called as a job starts: the queue's virtual time moves to its priority, read from the job (a
 * changed priority is not in its options). A job behind the line does not move it.
 */
export async function advanceVirtualTime(queue: string, job: Job): Promise<void> {
  const priority = Number(job.priority || job.opts.priority || 0);
  if (priority > 0 && priority < behindTheLine) await (await redisOf(queue)).advanceFairVirtualTime(keyOf(queue), priority, organisationTagSeconds);
}

/** Past this virtual time, the count starts again at the next moment the queue is empty. */
const restartAfter = 100_000;

// KEYS: the queue's base key. ARGV: the virtual time past which the count restarts.
const restartScript = `
local epoch = redis.call('GET', KEYS[1] .. ':epoch') or '0'
if tonumber(redis.call('GET', KEYS[1] .. ':' .. epoch .. ':virtual-time') or '0') > tonumber(ARGV[1]) then redis.call('INCR', KEYS[1] .. ':epoch') end
return 0`;

/**
 * Called when a worker finds its queue empty: once the count is high, tags start again from 1, so
 * that they stay far from the end of BullMQ's range (a job still delayed with an older, higher tag
 * only waits a little longer once it is due). Rarely, so that the keys of old counts, which expire
 * by themselves, stay few.
 */
export async function restartVirtualTimeIfHigh(queue: string): Promise<void> {
  await (await redisOf(queue)).restartFairCountIfHigh(keyOf(queue), restartAfter);
}
