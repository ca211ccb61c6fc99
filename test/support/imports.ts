import type { Client } from './harness.js';
import { eventually } from './eventually.js';

/** The import record once it has finished (status no longer `processing`); the timeout only ends a test that would hang. */
export async function waitForImport(c: Client, id: string, timeoutMs = 60_000) {
  return eventually(
    async () => {
      const res = await c.get(`/imports/${id}`);
      return res.body.import.status !== 'processing' && res.body.import;
    },
    timeoutMs,
    `import ${id} to finish`,
  );
}
