import { afterAll, describe, expect, it } from 'vitest';
import { endAll } from '../chaos/own-processes.js';
import { describeRedisLoss, runRedisLoss } from '../chaos/redis-loss.js';

// The fast variant of `npm run chaos` scenario (a): real role processes, a redis-server of its own
// SIGKILLed under bookings and started again empty.
afterAll(endAll);

describe('Redis killed mid-stream and started again empty', () => {
  it('loses no webhook of a committed reservation, sends none twice, restores the timer schedules, and no process exits', async () => {
    const figures = await runRedisLoss({ databaseUrl: process.env.DATABASE_URL!, beforeMs: 2_000, outageMs: 4_000, afterMs: 2_000, deadlineMs: 45_000 });
    console.log(`redis-loss: ${describeRedisLoss(figures)}`);
    expect(figures.statuses).toMatch(/^201: \d+$/);
    expect(figures.committed).toBe(figures.requests);
    expect(figures.missing).toBe(0);
    expect(figures.received).toBe(figures.committed);
    expect(figures.duplicates).toBe(0);
    expect(figures.schedulesBackMs).not.toBeNull();
    expect(figures.schedulesBackMs!).toBeLessThan(60_000);
    expect(figures.exitedProcesses).toBe(0);
  }, 150_000);
});
