import { prepareGuestImport } from '../guests/guest-import.js';
import type { ImportKind, ImportRow } from './import-json.js';
import type { PreparedImport } from './import-contract.js';
import { prepareReservationImport } from './reservation-import.js';

/** The processor of each import kind: reads the record (rows, organisation, visible venues) before the first chunk. */
export const importProcessors: Partial<Record<ImportKind, (record: ImportRow) => Promise<PreparedImport>>> = {
  guests: prepareGuestImport,
  reservations: prepareReservationImport,
};
