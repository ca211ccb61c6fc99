import { Queue, type JobsOptions } from 'bullmq';
import { createProducerConnection, queuePrefix } from '../redis.js';
import { closeConnection, type RedisClient } from '../redis/connections.js';

/** Completed jobs are kept briefly for Bull Board; PostgreSQL is where history lives. */
export const defaultJobOptions: JobsOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: { age: 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

let connection: RedisClient | undefined;
const readyListeners = new Set<() => void>();
const queues = new Map<string, Queue>();

export function getQueueConnection(): RedisClient {
  if (!connection) {
    connection = createProducerConnection();
    connection.on('error', () => {});
    connection.on('ready', () => readyListeners.forEach((listener) => listener()));
  }
  return connection;
}

/**
 * Calls `listener` each time the producer connection is (re)established: after Redis comes back,
 * possibly empty, what lives only in Redis (job schedulers, jobs not yet sent) can be put back.
 * Returns the function that stops listening.
 */
export function onQueueConnectionReady(listener: () => void): () => void {
  readyListeners.add(listener);
  getQueueConnection();
  return () => void readyListeners.delete(listener);
}

/** False while the producer connection is down: a command that just failed failed because of Redis. */
export function isQueueConnectionReady(): boolean {
  return getQueueConnection().status === 'ready';
}

export function getQueue(name: string): Queue {
  let queue = queues.get(name);
  if (!queue) {
    queue = new Queue(name, { connection: getQueueConnection(), prefix: queuePrefix(name), defaultJobOptions });
    queue.on('error', () => {});
    queues.set(name, queue);
  }
  return queue;
}

/**
 * Adds jobs to `queue` in one round trip. One job (a booking's event, an event's delivery, most
 * often) goes by its script alone: addBulk makes an ioredis pipeline for any number of jobs, and
 * ioredis copies every script the connection defines onto each new pipeline.
 */
export async function addJobs(queue: Queue, jobs: Parameters<Queue['addBulk']>[0]): Promise<void> {
  if (jobs.length === 1) await queue.add(jobs[0].name, jobs[0].data, jobs[0].opts);
  else if (jobs.length) await queue.addBulk(jobs);
}

export async function closeQueues(): Promise<void> {
  await Promise.all([...queues.values()].map((q) => q.close().catch(() => {})));
  queues.clear();
  if (connection) {
    const conn = connection;
    connection = undefined;
    await closeConnection(conn);
  }
}
