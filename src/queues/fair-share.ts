import type { Job } from 'bullmq';
import { groupBy } from '../lib/group-by.js';
import { createMicroBatcher } from '../lib/micro-batch.js';
import { redisKey } from '../redis.js';
import type { RedisClient } from '../redis/connections.js';
import { defineScripts, runScript, scripts } from '../redis/scripts.js';
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

/**
 * The queues' connection once ready (it queues no command while connecting), with the scripts
 * defined on it: ioredis sends a script's hash (EVALSHA), and its text only when Redis does not know
 * it (after a restart), where EVAL sent the text with every job.
 */
async function redisOf(queue: string): Promise<RedisClient> {
  await getQueue(queue).waitUntilReady();
  const redis = getQueueConnection();
  defineScripts(redis);
  return redis;
}

/**
 * The keys of one fair queue, all in the queue's own hash tag (src/redis/key-layout.ts): its count
 * (epoch), virtual time, the organisations that took turns lately, until when one is held back, and
 * per organisation its last tag and its pace.
 */
function fairKeys(queue: string) {
  const key = (...rest: string[]) => redisKey(['fair', queue], ...rest);
  return {
    epoch: key('epoch'),
    virtualTime: key('virtual-time'),
    recent: key('recent'),
    pacedUntil: key('paced-until'),
    organisationTag: (organisationId: string) => key('organisation', organisationId),
    organisationPace: (organisationId: string) => key('pace', organisationId),
  };
}

/**
 * How fast one organisation's jobs are let into the line beyond a burst: what keeps one
 * organisation's bulk (20,000 events of a floor-plan switch) from taking the whole machine, which
 * the order of the line alone does not (docs/architecture.md "Fair queues", pacing).
 */
export interface Pace {
  perSecond: number;
  burst: number;
  /**
   * The pace holds an organisation back only while another organisation took turns in the queue
   * within this many milliseconds (default 10 s: someone is active now): alone, there is no one to
   * be fair to, and its bulk runs as fast as the workers go. Once held back, it stays paced until
   * its held-back jobs are due.
   */
  companyMs?: number;
}

/** Pace.companyMs by default. */
const companyMs = 10_000;

/** Held-back jobs come due at multiples of this many milliseconds of Redis's clock. */
const paceStepMs = 100;

/**
 * A job's place in the line and, when paced, how long it is held back (ms) from `timestamp`, Redis's
 * clock when the turn was taken: the job's timestamp, so that BullMQ's due time (timestamp + delay)
 * is the grid's and held-back jobs stay in order whatever this process's clock says.
 */
export interface FairTurn {
  priority: number;
  delay: number;
  timestamp?: number;
}

/**
 * The turns of `count` jobs of one organisation, in the order they are to run. Priorities past
 * BullMQ's range stay at its lowest, where BullMQ keeps insertion order: a queue that never drains
 * over two million jobs degrades to first come, first served, never to disorder. Held-back jobs are
 * due at the pace, one after the other, so an organisation's later jobs stay behind them.
 */
export async function takeFairTurns(queue: string, organisationId: string, count: number, pace?: Pace): Promise<FairTurn[]> {
  if (count === 0) return [];
  const perSecond = pace?.perSecond ?? 0;
  const redis = await redisOf(queue);
  const keys = fairKeys(queue);
  const tagKeys = [keys.epoch, keys.virtualTime, keys.organisationTag(organisationId)] as const;
  const tagArgs = [count, organisationTagSeconds] as const;
  let first: number;
  let [firstDue, now, paced] = [0, 0, 0];
  if (perSecond <= 0) {
    first = Number(await runScript(redis, scripts.takeFairTags, tagKeys, tagArgs));
  } else {
    // Pacing, then tagging, in one script: no restart of the count falls between them (restart-fair-count.lua).
    const paceKeys = [keys.recent, keys.organisationPace(organisationId), keys.pacedUntil] as const;
    const paceArgs = [organisationId, perSecond, pace?.burst ?? 0, pace?.companyMs ?? companyMs] as const;
    const turn = await runScript(redis, scripts.takePacedFairTags, [...tagKeys, ...paceKeys], [...tagArgs, ...paceArgs]);
    [firstDue, now, paced, first] = turn.map(Number);
  }
  const interval = paced ? 1000 / perSecond : 0;
  // Held-back jobs come due together on a grid of Redis's clock, so that a worker takes them as a
  // batch (one job at a time costs far more per job); the grid keeps them in order across calls.
  const dueIn = (i: number) => {
    const due = firstDue + i * interval;
    return due <= 0 ? 0 : Math.ceil((now + due) / paceStepMs) * paceStepMs - now;
  };
  const timestamp = paced ? now : undefined;
  return Array.from({ length: count }, (_, i) => ({ priority: Math.min(lowestPriority, first + i), delay: dueIn(i), timestamp }));
}

/** The priorities of `count` jobs of one organisation, in the order they are to run (no pace). */
export async function takeFairPriorities(queue: string, organisationId: string, count: number): Promise<number[]> {
  return (await takeFairTurns(queue, organisationId, count)).map((turn) => turn.priority);
}

/** The turns of jobs of several organisations, each organisation's in the order given. */
export async function takeFairTurnsOf<T>(
  queue: string,
  items: readonly T[],
  organisationOf: (item: T) => string,
  pace?: Pace,
): Promise<FairTurn[]> {
  // Indexes grouped, not copied per item: one batch may hold an organisation's 20,000 jobs.
  const byOrganisation = groupBy(
    items.map((_, i) => i),
    (i) => organisationOf(items[i]),
  );
  const turns = new Array<FairTurn>(items.length);
  await Promise.all(
    [...byOrganisation].map(async ([organisationId, indexes]) => {
      const taken = await takeFairTurns(queue, organisationId, indexes.length, pace);
      indexes.forEach((index, k) => (turns[index] = taken[k]));
    }),
  );
  return turns;
}

/** The priorities of jobs of several organisations, each organisation's in the order given (no pace). */
export async function takeFairPrioritiesOf<T>(queue: string, items: readonly T[], organisationOf: (item: T) => string): Promise<number[]> {
  return (await takeFairTurnsOf(queue, items, organisationOf)).map((turn) => turn.priority);
}

/** The priority a starting job moves the virtual time to; null for a job behind the line (or untagged), which does not move it. */
function virtualTimeOf(job: Job): number | null {
  // Read from the job: a changed priority is not in its options.
  const priority = Number(job.priority || job.opts.priority || 0);
  return priority > 0 && priority < behindTheLine ? priority : null;
}

async function moveVirtualTime(queue: string, priority: number): Promise<void> {
  await runScript(await redisOf(queue), scripts.advanceFairVirtualTime, [fairKeys(queue).virtualTime], [priority, organisationTagSeconds]);
}

/** Called as a job starts: the queue's virtual time moves to its priority. A job behind the line does not move it. */
export async function advanceVirtualTime(queue: string, job: Job): Promise<void> {
  const priority = virtualTimeOf(job);
  if (priority !== null) await moveVirtualTime(queue, priority);
}

/**
 * advanceVirtualTime for the jobs of one worker, whose moves share round trips: the jobs that start
 * in the same moment (lingerMs 0: the next turn of the event loop's timers) make one move, to the
 * highest of their priorities. The script keeps the larger of the two values, so that one move
 * leaves the count as a move per job would have; each job still runs only once its priority is in
 * Redis (or fails with the move's error, as it did alone). worker-events starts a batch's worth of
 * jobs at once when the batch before it completes.
 */
export function coalesceVirtualTimeMoves(queue: string): (job: Job) => Promise<void> {
  const moves = createMicroBatcher(
    async (priorities: number[]) => {
      await moveVirtualTime(queue, Math.max(...priorities));
      return new Map();
    },
    { maxSize: Number.POSITIVE_INFINITY, lingerMs: 0 },
  );
  return async (job) => {
    const priority = virtualTimeOf(job);
    if (priority !== null) await moves.submit(priority);
  };
}

/** Past this virtual time, the count starts again at a moment the queue is empty (looked at every few seconds). */
const restartAfter = 100_000;

/**
 * Called when a worker finds its queue empty (at most every few seconds: src/queues/start-worker.ts):
 * once the count is high, tags start again from 1, so
 * that they stay far from the end of BullMQ's range (a job still delayed with an older, higher tag
 * only waits a little longer once it is due). Rarely, so that the keys of old counts, which expire
 * by themselves, stay few.
 */
export async function restartVirtualTimeIfHigh(queue: string): Promise<void> {
  const keys = fairKeys(queue);
  await runScript(await redisOf(queue), scripts.restartFairCount, [keys.pacedUntil, keys.epoch, keys.virtualTime], [restartAfter]);
}
