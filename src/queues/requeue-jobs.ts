import type { Queue } from 'bullmq';
import { getQueueConnection } from './queues.js';

/**
 * Gives each item's id (= jobId) a job again unless it has one waiting, delayed or running: ids Redis does
 * not know (it lost its data, or never got the job) and ids whose job ended without concluding its
 * row (failed while the database was down, or completed) are added afresh, in one bulk call.
 * `add` must be idempotent by jobId, so a sweeper racing another sweeper or the process that
 * enqueues the same ids itself adds nothing twice. Returns how many ids were added. `queue` is one
 * of getQueue's (the ids are looked up on its connection).
 */
export async function requeueUnlessPending<T extends { id: string }>(
  queue: Queue,
  items: T[],
  add: (items: T[]) => Promise<unknown>,
): Promise<number> {
  const ids = items.map((item) => item.id);
  // First whether Redis has a job under each id at all (the key BullMQ's add looks at to ignore a
  // duplicate id), in one round trip: after Redis lost its data none has, and the state of each
  // (a script that searches the waiting and active lists) is asked only of the ids that have one.
  const pipeline = getQueueConnection().pipeline();
  for (const id of ids) pipeline.exists(queue.toKey(id));
  const exists = ids.length ? ((await pipeline.exec()) ?? []) : [];
  const known = ids.filter((_, i) => exists[i]?.[1] === 1);
  const unknown = ids.filter((_, i) => exists[i]?.[1] !== 1);
  // Sent together without waiting for each other: about one round trip for the whole batch.
  const states = await Promise.all(known.map((id) => queue.getJobState(id)));
  const ended = known.filter((_, i) => states[i] === 'failed' || states[i] === 'completed');
  await Promise.all(ended.map((id) => queue.remove(id)));
  const toAdd = new Set([
    ...unknown,
    ...known.filter((_, i) => states[i] === 'unknown' || states[i] === 'failed' || states[i] === 'completed'),
  ]);
  // In the order given: a fair queue keeps each organisation's jobs in that order.
  if (toAdd.size) await add(items.filter((item) => toAdd.has(item.id)));
  return toAdd.size;
}
