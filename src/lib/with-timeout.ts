/**
 * `promise`, or a rejection once `ms` have passed without its answer: a scrape or a health check
 * answers even when Redis or PostgreSQL does not. The timer does not hold the process open.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<T>((_, reject) => setTimeout(() => reject(new Error('timeout')), ms).unref())]);
}
