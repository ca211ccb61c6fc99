import type { Queue } from 'bullmq';

/**
 * Gives each id (= jobId) a job again unless it has one waiting, delayed or running: ids Redis does
 * not know (it lost its data, or never got the job) and ids whose job ended without concluding its
 * row (failed while the database was down, or completed) are added afresh, in one bulk call.
 * `add` must be idempotent by jobId, so a sweeper racing another sweeper or the process that
 * enqueues the same ids itself adds nothing twice. Returns how many ids were added.
 */
export async function requeueUnlessPending(queue: Queue, ids: string[], add: (ids: string[]) => Promise<unknown>): Promise<number> {
  // Sent together without waiting for each other: about one round trip for the whole batch.
  const states = await Promise.all(ids.map((id) => queue.getJobState(id)));
  const ended = ids.filter((_, i) => states[i] === 'failed' || states[i] === 'completed');
  await Promise.all(ended.map((id) => queue.remove(id)));
  const toAdd = ids.filter((_, i) => states[i] === 'unknown' || states[i] === 'failed' || states[i] === 'completed');
  if (toAdd.length) await add(toAdd);
  return toAdd.length;
}
