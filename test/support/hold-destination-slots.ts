/**
 * A worker that takes slots of a destination and never releases them: destination-slots.test.ts
 * SIGKILLs it to prove that its leases end on their own.
 * Arguments: <prefix> <destination> <limit> <slots to take> <lease ms>; prints `held` once it holds them.
 */
import { connectRedis } from '../../src/redis.js';
import { DestinationSlots } from '../../src/services/webhooks/destination-slots.js';
import { useFileSettings } from './file-settings.js';

useFileSettings({}); // Redis's address and topology

const [prefix, destination, limit, count, leaseMs] = process.argv.slice(2);
const slots = new DestinationSlots({
  redis: connectRedis('slots'),
  prefix,
  limit: Number(limit),
  workerConcurrency: 10,
  wake: async () => false,
  leaseMs: Number(leaseMs),
});
for (let i = 0; i < Number(count); i++) {
  if (!(await slots.acquire(destination))) throw new Error(`slot ${i + 1} of ${destination} not acquired`);
}
process.stdout.write('held\n');
setInterval(() => {}, 60_000); // alive until killed
