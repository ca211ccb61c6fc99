import { describe, expect, it } from 'vitest';
import { maxDeliveryAttempts, retryDelayMs, webhookBackoffStrategy } from '../../src/lib/webhook-backoff.js';

describe('webhook retry schedule', () => {
  it.each([
    { failed: 1, next: 2, ms: 60_000 },
    { failed: 2, next: 3, ms: 300_000 },
    { failed: 3, next: 4, ms: 900_000 },
    { failed: 4, next: 5, ms: 3_600_000 },
  ])('waits $ms ms before attempt $next', ({ failed, ms }) => {
    expect(retryDelayMs(failed)).toBe(ms);
  });

  it.each([5, 6, 0, -1, 1.5])('does not retry after attempt %s', (failed) => {
    expect(retryDelayMs(failed)).toBe(-1);
  });

  it.each([
    { scale: 1, failed: 1, ms: 60_000 },
    { scale: 0.001, failed: 1, ms: 60 },
    { scale: 0.001, failed: 4, ms: 3600 },
    { scale: 0.5, failed: 2, ms: 150_000 },
  ])('scales by $scale', ({ scale, failed, ms }) => {
    expect(retryDelayMs(failed, scale)).toBe(ms);
  });

  it('allows five attempts in all', () => {
    expect(maxDeliveryAttempts).toBe(5);
  });

  it.each([
    { attemptsMade: 1, err: undefined, ms: 60_000 },
    { attemptsMade: 3, err: undefined, ms: 900_000 },
    { attemptsMade: 1, err: Object.assign(new Error('x'), { attempt: 4 }), ms: 3_600_000 },
    { attemptsMade: 2, err: Object.assign(new Error('x'), { attempt: 5 }), ms: -1 },
  ])('as a BullMQ strategy follows the attempt the error names ($attemptsMade, $ms)', ({ attemptsMade, err, ms }) => {
    expect(webhookBackoffStrategy(1)(attemptsMade, 'webhook', err)).toBe(ms);
  });
});
