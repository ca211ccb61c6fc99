import type { Tx } from '../../db/client.js';
import { prepareGuestImport } from '../guests/guest-import.js';
import type { ImportKind, ImportRow } from './import-json.js';
import { prepareReservationImport } from './reservation-import.js';

export type RowOutcome = { outcome: 'created' } | { outcome: 'updated' } | { outcome: 'rejected'; code: string; message: string; fields: string[] };

/** One import run's row handler; it sees the whole batch, so that it can tell duplicates apart. */
export interface PreparedImport {
  /** Handles row `index` inside the chunk's transaction. Must not emit events. Throwing fails the chunk (retried). */
  processRow: (tx: Tx, index: number) => Promise<RowOutcome>;
}

/** The processor of each import kind: reads the record (rows, organisation, visible venues) before the first chunk. */
export const importProcessors: Partial<Record<ImportKind, (record: ImportRow) => Promise<PreparedImport>>> = {
  guests: prepareGuestImport,
  reservations: prepareReservationImport,
};
