import { afterAll, describe, expect, it } from 'vitest';
import { pool } from '../../src/db/client.js';
import { endAll } from '../chaos/own-processes.js';
import { describeRedisLoss, runRedisLoss } from '../chaos/redis-loss.js';
import { useOwnDatabase } from '../support/own-database.js';

// A database of its own: the spawned worker-timers sweeps every stale row of its database, which
// must not be those of the files running at the same time.
const ownDatabase = await useOwnDatabase('redisloss');

// The fast variant of `npm run chaos` scenario redis-loss: real role processes, a redis-server of
// its own SIGKILLed under bookings and started again empty.
afterAll(async () => {
  await endAll();
  await pool().end();
  await ownDatabase.drop();
});

describe('Redis killed mid-stream and started again empty', () => {
  it('loses no webhook of a committed reservation, sends none twice, restores the timer schedules, and no process exits', async () => {
    const figures = await runRedisLoss({
      databaseUrl: ownDatabase.url,
      beforeMs: 2_000,
      outageMs: 4_000,
      afterMs: 2_000,
      deadlineMs: 45_000,
    });
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
