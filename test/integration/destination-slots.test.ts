import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { connectRedis } from '../../src/redis.js';
import type { RedisClient } from '../../src/redis/connections.js';
import { taggedKey } from '../../src/redis/key-layout.js';
import { destinationSlotTuning } from '../../src/lib/webhook-destination.js';
import { DestinationSlots, type DestinationSlot, type DestinationSlotsOptions } from '../../src/services/webhooks/destination-slots.js';
import { eventually } from '../support/eventually.js';
import { watchRedisCommands } from '../support/redis-monitor.js';

// The per-destination limit on its own, against the real Redis: each instance stands for one
// worker-webhooks process. Keys of its own prefix; a destination of its own per test.
const prefix = `${processConfig().QUEUE_PREFIX}slots`;
const redis = connectRedis('slots');
const instances: DestinationSlots[] = [];
const children: ChildProcess[] = [];
let destinations = 0;
const newDestination = () => `https://partner-${++destinations}.example`;
const slotsKey = (destination: string) => taggedKey(prefix, ['destination', destination], 'slots');
const members = (destination: string) => redis.zrange(slotsKey(destination), '0', '-1');
const connectionOf = new Map<DestinationSlots, RedisClient>();

function slotsOf(options: Partial<DestinationSlotsOptions> & { limit: number }): DestinationSlots {
  const connection = connectRedis('slots');
  const slots = new DestinationSlots({ redis: connection, prefix, workerConcurrency: 10, wake: async () => false, ...options });
  instances.push(slots);
  connectionOf.set(slots, connection);
  return slots;
}

/**
 * Resolves once every command `slots` has sent so far is answered and acted on: an acquire() called
 * just before has then made its first look and, finding no slot, is in line in the process. A PING on
 * the instance's own connection is answered after those commands (one connection answers in order),
 * and setImmediate lets the promise chains their replies started run to their end.
 */
async function settled(slots: DestinationSlots): Promise<void> {
  await connectionOf.get(slots)!.ping();
  await new Promise((resolve) => setImmediate(resolve));
}

/** Whether `promise` has settled before any timer or I/O could run: it was resolved at once, not at a later look. */
async function resolvedAtOnce<T>(promise: Promise<T>): Promise<boolean> {
  const pending = Symbol('pending');
  return (await Promise.race([promise, new Promise((resolve) => setImmediate(() => resolve(pending)))])) !== pending;
}

/** Slots of one slot per destination whose wake-ups (promotions of postponed jobs) are recorded in order. */
function slotsRecordingWakes(): { slots: DestinationSlots; woken: string[] } {
  const woken: string[] = [];
  const slots = slotsOf({
    limit: 1,
    wake: async (id) => {
      woken.push(id);
      return true;
    },
  });
  return { slots, woken };
}

/** Redis's clock in ms: leases are scored by it. */
async function redisMs(): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}

async function acquired(slots: DestinationSlots, destination: string, jobId?: string): Promise<DestinationSlot> {
  const slot = await slots.acquire(destination, jobId);
  if (!slot) throw new Error(`no slot of ${destination}`);
  return slot;
}

/**
 * One attempt of at least `ms`, measured by `slots` at its release: held by the clock the hold is
 * measured with, since a timer of `ms` may fire a fraction of a millisecond early on it.
 */
async function holdOnce(slots: DestinationSlots, destination: string, ms: number): Promise<void> {
  const slot = await acquired(slots, destination);
  const heldFrom = performance.now();
  while (performance.now() - heldFrom < ms) await new Promise((resolve) => setTimeout(resolve, ms - (performance.now() - heldFrom) + 1));
  await slots.release(slot);
}

/** The names of the commands Redis receives from `connection` from now on (MONITOR), until `watching.stop()`. */
async function watchCommandsOf(
  connection: RedisClient,
  ignore: (line: string) => boolean = () => false,
): Promise<{ commands: string[]; watching: { stop: () => void }; seenAll: () => Promise<void> }> {
  const address = /addr=(\S+)/.exec(String(await connection.client('INFO')))?.[1];
  const commands: string[] = [];
  const watching = await watchRedisCommands(processConfig().REDIS_URL ?? 'redis://127.0.0.1:6379', ({ source, name, line }) => {
    if (source === address && !ignore(line)) commands.push(name);
  });
  // A PING sent last, then seen on the monitor: the monitor shows a connection's commands in order,
  // but its socket may be read after the PING's answer on the connection's own. What the monitor
  // shows after it (the next look of a line still waiting, every localPollMs) is left out: waiting
  // for the PING to be the last command seen missed it under load when a look followed at once.
  const seenAll = async () => {
    const from = commands.length;
    await connection.ping();
    const at = await eventually(
      async () => {
        const i = commands.indexOf('ping', from);
        return i >= 0 ? i : undefined;
      },
      2000,
      'the monitor to show the closing ping',
      10,
    );
    commands.length = at + 1;
  };
  return { commands, watching, seenAll };
}

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await Promise.all(instances.map((s) => s.close()));
  await redis.quit();
});

describe('DestinationSlots (the per-destination limit, docs/webhooks.md "Isolation per destination")', () => {
  it('saturation: `limit` attempts hold slots at once across processes; another waits, then gets none until one is released', async () => {
    const destination = newDestination();
    const first = slotsOf({ limit: 2 });
    const second = slotsOf({ limit: 2 }); // another worker process
    const held = [await acquired(first, destination), await acquired(first, destination)];
    expect(await members(destination)).toHaveLength(2);

    // Saturated: the other process waits (at most localWaitMs, looking again every localPollMs), then gives up: the job is postponed.
    // The lower bound is the point (it waited its full localWaitMs); a busy machine only makes the wait longer.
    const started = Date.now();
    expect(await second.acquire(destination)).toBeNull();
    expect(Date.now() - started).toBeGreaterThanOrEqual(destinationSlotTuning.localWaitMs - 50);
    expect(await members(destination)).toHaveLength(2);

    // A release while it waits: it takes the freed slot at its next look.
    const waiting = second.acquire(destination);
    await settled(second);
    await first.release(held[0]);
    const taken = await waiting;
    expect(taken?.token).toBeTruthy();
    expect((await members(destination)).sort()).toEqual([held[1].token, taken!.token].sort());
  });

  it('hand-over: a release passes the slot straight to the job waiting in the same process, never freeing it for another', async () => {
    const destination = newDestination();
    const here = slotsOf({ limit: 1 });
    const elsewhere = slotsOf({ limit: 1 });
    const held = await acquired(here, destination);
    const [, scoreBefore] = await redis.zrange(slotsKey(destination), '0', '-1', 'WITHSCORES');

    const waiter = here.acquire(destination);
    const competitor = elsewhere.acquire(destination); // looks every localPollMs for a free slot
    await settled(elsewhere);
    await settled(here); // the waiter is in line now, for localPollMs
    await here.release(held);
    expect(await resolvedAtOnce(waiter), 'handed over at once, not found at a later look').toBe(true);
    const handed = await waiter;
    expect(handed).toMatchObject({ token: held.token, handOvers: 1 });
    // The same member with the same lease (most of it left, not renewed): the slot was never free.
    expect(await redis.zrange(slotsKey(destination), '0', '-1', 'WITHSCORES')).toEqual([held.token, scoreBefore]);
    expect(await competitor, 'the other process never saw the slot free').toBeNull();
    await here.release(handed!);
    expect(await members(destination)).toEqual([]);
  });

  it('hand-over: once a share of its lease has passed, the slot handed over is renewed, and a lease renewed so is not lost', async () => {
    const destination = newDestination();
    const leaseMs = 800;
    const here = slotsOf({ limit: 1, leaseMs });
    const held = await acquired(here, destination);
    const [, scoreBefore] = await redis.zrange(slotsKey(destination), '0', '-1', 'WITHSCORES');
    // Held past renewAfterLeaseShare of its lease (a lower bound: a busy machine only makes it longer).
    await new Promise((resolve) => setTimeout(resolve, leaseMs * destinationSlotTuning.renewAfterLeaseShare + 100));
    const waiter = here.acquire(destination);
    await settled(here);
    await here.release(held);
    const handed = (await waiter)!;
    expect(handed).toMatchObject({ token: held.token, handOvers: 1 });
    await eventually(
      async () => {
        const [member, score] = await redis.zrange(slotsKey(destination), '0', '-1', 'WITHSCORES');
        return member === held.token && Number(score) > Number(scoreBefore);
      },
      2000,
      'the lease renewed',
    );
    // Past the first lease's end (by Redis's clock, which decides), the renewed lease is still running.
    await eventually(async () => (await redisMs()) > Number(scoreBefore), 2000, "the first lease's end passed");
    const [member, score] = await redis.zrange(slotsKey(destination), '0', '-1', 'WITHSCORES');
    expect(member).toBe(held.token);
    expect(Number(score)).toBeGreaterThan(await redisMs());
    await here.release(handed);
    expect(await members(destination)).toEqual([]);
  });

  it('hand-over: after maxHandOvers passes in a row the slot is freed, so that the jobs of other processes get their share', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 1 });
    let slot = await acquired(slots, destination);
    const first = slot.token;
    for (let pass = 1; pass <= destinationSlotTuning.maxHandOvers; pass++) {
      const waiter = slots.acquire(destination);
      await settled(slots); // the waiter has looked at Redis once and is in line
      await slots.release(slot);
      slot = (await waiter)!;
      expect(slot).toMatchObject({ token: first, handOvers: pass });
    }
    const waiter = slots.acquire(destination);
    await settled(slots);
    await slots.release(slot);
    const after = await waiter; // woken to try for itself: a new member of the set
    expect(after?.token).toBeTruthy();
    expect(after!.token).not.toBe(first);
    expect(after!.handOvers).toBe(0);
    await slots.release(after!);
  });

  it('lease expiry: the slot of a worker killed while holding it is taken again once its lease ends, the live ones kept', async () => {
    const destination = newDestination();
    const leaseMs = 1500;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'test/support/hold-destination-slots.ts', prefix, destination, '2', '1', String(leaseMs)],
      {
        env: process.env,
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    children.push(child);
    await once(child.stdout!, 'data'); // `held`
    const childAcquiredBefore = Date.now();
    const [orphan] = await members(destination);
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;

    // A live worker takes the other slot late in the orphan's lease (its last half second by Redis's
    // clock, which decides leases): the destination's key lives on with its lease.
    await eventually(
      async () => {
        const [seconds, micros] = await redis.time();
        return Number(await redis.zscore(slotsKey(destination), orphan)) - (Number(seconds) * 1000 + Number(micros) / 1000) <= 500;
      },
      5000,
      "the orphan's lease in its last half second",
      20,
    );
    const live = slotsOf({ limit: 2, leaseMs });
    const first = await acquired(live, destination);
    expect((await members(destination)).sort()).toEqual([orphan, first.token].sort());

    // The killed worker's slot comes back when its own lease ends (it is never released).
    const second = await acquired(live, destination);
    expect(Date.now() - childAcquiredBefore).toBeGreaterThanOrEqual(leaseMs - 100);
    expect((await members(destination)).sort()).toEqual([first.token, second.token].sort());
  });

  it('fairness: jobs waiting in a process get the slot in the order they came, within a look of each other', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 2 }); // up to 4 jobs may wait here for its slots
    const held = [await acquired(slots, destination), await acquired(slots, destination)];
    const served: number[] = [];
    const waiters: Array<Promise<void>> = [];
    for (const n of [1, 2, 3]) {
      waiters.push(
        (async () => {
          const slot = await acquired(slots, destination);
          served.push(n);
          await slots.release(slot);
        })(),
      );
      await settled(slots); // in line before the next one comes
    }
    await slots.release(held[0]);
    await Promise.all(waiters);
    expect(served).toEqual([1, 2, 3]);
    await slots.release(held[1]);
  });

  it('fairness: postponed jobs are woken oldest first, those enqueued already postponed behind them, and a job postponed again keeps its place', async () => {
    const destination = newDestination();
    const { slots, woken } = slotsRecordingWakes();
    const delays: number[] = [];
    const postpone = (id: string, postponed = 0) => slots.postpone(destination, id, postponed, async (ms) => void delays.push(ms));
    await postpone('job-1');
    await postpone('job-2');
    await postpone('job-3');
    // An enqueue of four due now: with 1 slot, 2 go to the workers at once, the others wait behind job-3.
    const heldBack = await DestinationSlots.holdBack(redis, new Map([[destination, ['new-1', 'new-2', 'new-3', 'new-4']]]), {
      prefix,
      limit: 1,
    });
    expect([...heldBack.delays.keys()]).toEqual(['new-3', 'new-4']);
    await heldBack.enlist();
    await postpone('job-1', 1); // came back, found the destination saturated again
    expect(delays.every((ms) => ms > 0)).toBe(true);

    // Each release wakes two while no job waits in the process.
    await slots.release(await acquired(slots, destination));
    await eventually(async () => woken.length >= 2, 2000, 'two wake-ups');
    await slots.release(await acquired(slots, destination));
    await eventually(async () => woken.length >= 4, 2000, 'four wake-ups');
    await slots.release(await acquired(slots, destination));
    await eventually(async () => woken.length >= 5, 2000, 'five wake-ups');
    expect(woken).toEqual(['job-1', 'job-2', 'job-3', 'new-3', 'new-4']);
  });
  it('postponement: a job that found no slot and no place to wait waits about its turn behind the jobs its try found listed ahead', async () => {
    const destination = newDestination();
    // A worker of concurrency 1: one job may wait in the process, the next has no place.
    const slots = slotsOf({ limit: 1, workerConcurrency: 1 });
    await holdOnce(slots, destination, 100);
    const held = await acquired(slots, destination);
    for (let i = 0; i < 20; i++) await slots.postpone(destination, `early-${i}`, 0, async () => {});
    const inLine = slots.acquire(destination);
    await settled(slots);
    expect(await slots.acquire(destination, 'late')).toBeNull();
    let delay = 0;
    await slots.postpone(destination, 'late', 0, async (ms) => void (delay = ms));
    // 20 ahead, each about twice the measured hold on one slot: about 4 s, not the 100-200 ms of a first postponement.
    expect(delay).toBeGreaterThanOrEqual(20 * destinationSlotTuning.measuredHoldFactor * 100);
    expect(delay).toBeLessThanOrEqual(destinationSlotTuning.longestQueuedPostponementMs);
    await slots.release(held);
    await slots.release((await inLine)!);
  });

  it('postponement: a job that finds no slot and may not wait sends 2 round trips to Redis, its try (which answers its place) and its entry in the line', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 1 });
    // An attempt of over a second, measured at its release: this process's jobs no longer wait here for this destination.
    const slow = await acquired(slots, destination);
    await new Promise((resolve) => setTimeout(resolve, destinationSlotTuning.quickAttemptMs + 50));
    await slots.release(slow);
    const held = await acquired(slotsOf({ limit: 1 }), destination);
    const connection = connectionOf.get(slots)!;
    const { commands, watching, seenAll } = await watchCommandsOf(connection);
    try {
      expect(await slots.acquire(destination, 'job')).toBeNull();
      await slots.postpone(destination, 'job', 0, async () => {});
      await seenAll();
    } finally {
      watching.stop();
    }
    expect(commands).toEqual(['evalsha', 'multi', 'zadd', 'expire', 'exec', 'ping']);
    expect(await redis.zrange(taggedKey(prefix, ['destination', destination], 'waiters'), '0', '-1')).toEqual(['job']);
    await slots.release(held);
  });

  it('a job that finds jobs of its own process waiting for the destination goes behind them without a try of its own: postponed with 1 round trip (its entry in the line), about its turn', async () => {
    const destination = newDestination();
    // One slot; a worker of concurrency 1 whose attempts were measured quick: its line may take the
    // whole concurrency, one job.
    const slots = slotsOf({ limit: 1, workerConcurrency: 1 });
    const other = slotsOf({ limit: 1, workerConcurrency: 1 });
    await holdOnce(slots, destination, 100);
    const held = await acquired(other, destination);
    for (let i = 0; i < 5; i++) await other.postpone(destination, `early-${i}`, 0, async () => {});
    const connection = connectionOf.get(slots)!;
    // Not counted: the looks of the process's line (the first job waits in it) for a slot freed
    // elsewhere, every localPollMs; an acquire script without a job id.
    const { commands, watching, seenAll } = await watchCommandsOf(connection, (line) => /^\S+ \[[^\]]+\] "evalsha" .*""$/.test(line));
    let first: Promise<DestinationSlot | null>;
    let delay = 0;
    try {
      first = slots.acquire(destination, 'first'); // tries, finds 5 listed, waits in the process
      await settled(slots);
      // The monitor shows commands later than they are answered: once it has shown a ping sent now,
      // the first job's try is counted, and left out from here.
      await seenAll();
      commands.length = 0;
      const second = slots.acquire(destination, 'second'); // no room left to wait here: postponed at once
      expect(await resolvedAtOnce(second), 'decided without a round trip').toBe(true);
      expect(await second).toBeNull();
      await slots.postpone(destination, 'second', 0, async (ms) => void (delay = ms));
      await seenAll();
    } finally {
      watching.stop();
    }
    expect(commands).toEqual(['multi', 'zadd', 'expire', 'exec', 'ping']);
    // Behind the 5 jobs the first job's try found listed, each about twice the measured hold on one
    // slot: about a second, not the 100-200 ms of a postponement without a place.
    expect(delay).toBeGreaterThanOrEqual(5 * destinationSlotTuning.measuredHoldFactor * 100);
    expect(delay).toBeLessThanOrEqual(destinationSlotTuning.longestQueuedPostponementMs);
    expect(await redis.zrange(taggedKey(prefix, ['destination', destination], 'waiters'), '0', '-1')).toEqual([
      'early-0',
      'early-1',
      'early-2',
      'early-3',
      'early-4',
      'second',
    ]);
    await other.release(held);
    const taken = await first; // a slot freed by another process is found at the waiting job's next look
    expect(taken?.token).toBeTruthy();
    await slots.release(taken!);
  });

  it("a line of a destination measured quick may take the worker's whole concurrency; before a measure, 2 jobs a slot", async () => {
    const unmeasured = newDestination();
    const quick = newDestination();
    const slots = slotsOf({ limit: 1, workerConcurrency: 10 });
    await holdOnce(slots, quick, 20);
    const held = [await acquired(slots, unmeasured), await acquired(slots, quick)];
    const lineOf = async (destination: string, jobs: number) => {
      const acquires = Array.from({ length: jobs }, () => slots.acquire(destination));
      await settled(slots);
      await settled(slots);
      const atOnce = await Promise.all(acquires.map(resolvedAtOnce));
      return { waiting: atOnce.filter((decided) => !decided).length, acquires };
    };
    // Before a measure: at most 2 a slot wait here, the others are postponed at once.
    const first = await lineOf(unmeasured, 4);
    expect(first.waiting).toBe(2);
    // Measured quick: the rest of the concurrency (10, 2 of it taken by the line above).
    const second = await lineOf(quick, 9);
    expect(second.waiting).toBe(8);
    for (const [destination, slot, line] of [
      [unmeasured, held[0], first],
      [quick, held[1], second],
    ] as const) {
      await slots.release(slot);
      for (const acquire of line.acquires) {
        const taken = await acquire;
        if (taken) await slots.release(taken);
      }
      expect(await members(destination)).toEqual([]);
    }
  });

  it('an attempt under way for longer than a quick one ends the wait of the jobs in line: they are postponed, and the next ones at once', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 1 });
    await holdOnce(slots, destination, 20);
    const held = await acquired(slots, destination);
    const started = performance.now();
    const waiting = slots.acquire(destination);
    expect(await waiting).toBeNull();
    // Dismissed at the first look after the attempt turned slow, before the end of localWaitMs.
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(destinationSlotTuning.quickAttemptMs - 50);
    expect(waited).toBeLessThan(destinationSlotTuning.localWaitMs);
    expect(await resolvedAtOnce(slots.acquire(destination, 'next')), 'postponed after its try, without waiting').toBe(false);
    expect(await slots.acquire(destination, 'next')).toBeNull();
    await slots.release(held);
  });

  it('a slot a look finds once its line has been served is freed, and the destination stays quick: the next saturated job waits in the process', async () => {
    const destination = newDestination();
    const here = slotsOf({ limit: 2 });
    const elsewhere = slotsOf({ limit: 2 });
    const ownSlot = await acquired(here, destination);
    const otherSlot = await acquired(elsewhere, destination);
    const waiter = here.acquire(destination);
    await settled(here); // in line; the line's first look comes after localPollMs
    // The look's try waits in Redis behind a command blocking this process's connection (a slow round
    // trip); meanwhile a slot is freed elsewhere and the line is served by a hand-over here.
    const connection = connectionOf.get(here)!;
    const blocked = connection.blpop(`${prefix}:nothing-${destination}`, 1);
    await elsewhere.release(otherSlot);
    await new Promise((resolve) => setTimeout(resolve, 4 * destinationSlotTuning.localPollMs));
    await here.release(ownSlot);
    const served = await waiter;
    expect(served?.token).toBe(ownSlot.token);
    await blocked;
    // The look took the freed slot and, with no one left in line, gave it back.
    await eventually(async () => (await members(destination)).length === 1, 2000, 'the slot the look found to be freed');
    expect(await members(destination)).toEqual([ownSlot.token]);
    await here.release(served!);

    // Past a quick attempt's time, nothing of this process is under way for the destination: a job
    // that finds its slots taken waits here for one (a slot it still counted as under way would mark
    // the destination slow, and every such job would be postponed at once).
    await new Promise((resolve) => setTimeout(resolve, destinationSlotTuning.quickAttemptMs + 50));
    const taken = [await acquired(elsewhere, destination), await acquired(elsewhere, destination)];
    const next = here.acquire(destination, 'next');
    await new Promise((resolve) => setTimeout(resolve, 2 * destinationSlotTuning.localPollMs));
    await elsewhere.release(taken[0]);
    const got = await next;
    expect(got?.token, 'waited in the process for the slot freed elsewhere, not postponed').toBeTruthy();
    await here.release(got!);
    await elsewhere.release(taken[1]);
  });

  it('jobs waiting in a process look at Redis for a slot freed elsewhere once every localPollMs for the line, not once each', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 1 });
    const held = await acquired(slotsOf({ limit: 1 }), destination);
    const line = Array.from({ length: 4 }, () => slots.acquire(destination));
    await settled(slots);
    const { commands, watching, seenAll } = await watchCommandsOf(connectionOf.get(slots)!);
    try {
      await new Promise((resolve) => setTimeout(resolve, 5 * destinationSlotTuning.localPollMs + 50));
      await seenAll();
    } finally {
      watching.stop();
    }
    const looks = commands.filter((name) => name === 'evalsha').length;
    // About 5 looks (a busy machine makes fewer); one per job would be about 20.
    expect(looks).toBeGreaterThanOrEqual(1);
    expect(looks).toBeLessThanOrEqual(6);
    expect(await Promise.all(line)).toEqual([null, null, null, null]);
    await slots.release(held);
  });

  it('a listed job that came back on its own leaves the waiter list once it holds a slot, by its own try or from the line', async () => {
    const destination = newDestination();
    const slots = slotsOf({ limit: 1, wake: async () => true });
    const listed = () => redis.zrange(taggedKey(prefix, ['destination', destination], 'waiters'), '0', '-1');
    for (const id of ['job-1', 'job-2', 'job-3', 'job-4', 'job-5']) await slots.postpone(destination, id, 0, async () => {});
    // job-1's delay ended: it runs, and its own try takes the free slot.
    const first = await acquired(slots, destination, 'job-1');
    expect(await listed()).toEqual(['job-2', 'job-3', 'job-4', 'job-5']);
    // So did job-5's: it waits in the line and is handed the slot (the hand-over wakes the two oldest,
    // job-2 and job-3); it leaves the list with the line's next look.
    const second = slots.acquire(destination, 'job-5');
    await settled(slots);
    await slots.release(first);
    const handed = await second;
    expect(handed?.token).toBe(first.token);
    await eventually(async () => ((await listed()).length === 1 ? true : undefined), 2000, 'job-5 unlisted');
    expect(await listed()).toEqual(['job-4']);
    await slots.release(handed!);
  });

  it('sends nothing of an enqueue at once while jobs wait for a saturated destination: the new ones go behind them, in order', async () => {
    const destination = newDestination();
    const { slots, woken } = slotsRecordingWakes();
    const held = await acquired(slots, destination);
    await slots.postpone(destination, 'job-1', 0, async () => {});
    await slots.postpone(destination, 'job-2', 0, async () => {});
    const heldBack = await DestinationSlots.holdBack(redis, new Map([[destination, ['new-1', 'new-2', 'new-3']]]), { prefix, limit: 1 });
    expect([...heldBack.delays.keys()]).toEqual(['new-1', 'new-2', 'new-3']);
    // Each about its turn behind the two listed jobs and the attempt under way (40 ms an attempt on one slot).
    expect(heldBack.delays.get('new-3')!).toBeGreaterThanOrEqual(4 * destinationSlotTuning.assumedHoldMs);
    await heldBack.enlist();
    await slots.release(held);
    for (let i = 0; i < 4; i++) await slots.release(await acquired(slots, destination));
    await eventually(async () => woken.length >= 5, 2000, 'five wake-ups');
    expect(woken).toEqual(['job-1', 'job-2', 'new-1', 'new-2', 'new-3']);
  });
});
