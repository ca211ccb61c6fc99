import { Redis } from 'ioredis';
import { deploymentKeysPattern } from '../../src/redis/key-layout.js';

/** Deletes the keys a deployment under `queuePrefix` left in the suite's Redis (REDIS_URL): a test's own prefix only. */
export async function removeDeploymentKeys(queuePrefix: string): Promise<void> {
  const redis = new Redis(process.env.REDIS_URL!);
  try {
    const keys = await redis.keys(deploymentKeysPattern(queuePrefix));
    if (keys.length) await redis.del(...keys);
  } finally {
    await redis.quit();
  }
}
