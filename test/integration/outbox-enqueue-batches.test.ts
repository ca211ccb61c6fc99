import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { eventJob } from '../../src/jobs/event-job.js';
import { closeQueues, getQueue, getQueueConnection } from '../../src/queues/queues.js';
import { namespaceOf } from '../../src/redis/key-layout.js';
import { enqueueEvents, settleEnqueuedEvents } from '../../src/services/outbox/outbox.js';
import { useOwnQueuePrefix } from '../support/file-settings.js';
import { commandsSentDuring, type MonitoredCommand } from '../support/redis-monitor.js';

/**
 * How a process sends its committed events to Redis (docs/architecture.md "Write path"): each batch
 * costs a fair turn per organisation and BullMQ's client work, so a process sends what commits
 * within 50 ms of a batch together, while a commit after a quiet moment goes at once.
 */
const config = useOwnQueuePrefix('obatch');
const namespace = namespaceOf(config.QUEUE_PREFIX);
afterAll(closeQueues);

const organisationId = randomUUID();
const commit = () => [{ id: randomUUID(), organisationId, venueId: organisationId, type: 'reservation_created' }];

/** The commands of this file's queue connection (keys of its prefix) that `work` made Redis run. */
async function commandsOf(work: () => Promise<void>): Promise<MonitoredCommand[]> {
  await getQueue(eventJob.queueName).waitUntilReady();
  return commandsSentDuring(config.REDIS_URL ?? 'redis://127.0.0.1:6379', getQueueConnection(), work, (c) => c.line.includes(namespace));
}

/** A fair turn's script names the queue's fair count (src/queues/fair-share.ts), a job's script does not. */
const fairTurns = (commands: MonitoredCommand[]) => commands.filter((c) => c.line.includes(`:fair:${eventJob.queueName}}`)).length;

describe("a process's committed events sent to Redis", () => {
  it('after a quiet moment, a commit is sent in the same turn of the event loop (no wait for a batch)', async () => {
    await sleep(120); // past any batch spacing of earlier enqueues
    const commands = await commandsOf(async () => {
      enqueueEvents(commit());
      // The marker goes on the same connection one turn later: the fair turn is ahead of it unless it waits.
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(fairTurns(commands), commands.map((c) => c.name).join(', ')).toBe(1);
    await settleEnqueuedEvents();
  });

  it('a busy process (several commits in one turn) sends what commits within 50 ms in one batch: 10 commits, 2 fair turns', async () => {
    await sleep(120);
    const ids: string[] = [];
    const commands = await commandsOf(async () => {
      // Two commits end in one turn: the process is busy.
      for (const rows of [commit(), commit()]) {
        ids.push(rows[0].id);
        enqueueEvents(rows);
      }
      // Eight more, each in a turn of its own, a few milliseconds apart.
      for (let i = 0; i < 8; i++) {
        await sleep(2);
        const rows = commit();
        ids.push(rows[0].id);
        enqueueEvents(rows);
      }
      await settleEnqueuedEvents();
    });
    expect(fairTurns(commands), commands.map((c) => c.name).join(', ')).toBe(2);
    const queue = getQueue(eventJob.queueName);
    for (const id of ids) expect(await queue.getJob(id), id).toBeDefined();
  });

  it('commits one at a time within 50 ms of a batch wait for the next one; after a quiet moment, at once: 4 commits, 3 fair turns', async () => {
    await sleep(120);
    const commands = await commandsOf(async () => {
      // The first goes at once; the next two, 5 ms apart, leave together 50 ms after it.
      for (let i = 0; i < 3; i++) {
        enqueueEvents(commit());
        await sleep(5);
      }
      // A quiet moment after their batch (a wide one: a loaded machine fires that batch's timer late):
      // the fourth goes at once again.
      await sleep(250);
      enqueueEvents(commit());
      await settleEnqueuedEvents();
    });
    expect(fairTurns(commands), commands.map((c) => c.name).join(', ')).toBe(3);
  });
});
