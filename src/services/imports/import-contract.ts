import type { Tx } from '../../db/client.js';

/**
 * What every import kind shares with the runner (process-import-job) and the kinds' registry
 * (import-processors). A leaf: it imports no kind and no runner, so the kinds can depend on it
 * without an import cycle through the registry.
 */
export type RowOutcome =
  { outcome: 'created' } | { outcome: 'updated' } | { outcome: 'rejected'; code: string; message: string; fields: string[] };

/** One import run's row handler; it sees the whole batch, so that it can tell duplicates apart. */
export interface PreparedImport {
  /** Handles row `index` inside the chunk's transaction. Must not emit events. Throwing fails the chunk (retried). */
  processRow: (tx: Tx, index: number) => Promise<RowOutcome>;
}

/** Rows per transaction: a crash loses at most one chunk of work, which is then done again. */
export const importChunkSize = 100;
