import { expect } from 'vitest';
import { processConfig } from '../../src/config.js';
import { checkInvariants, type InvariantCounts } from '../../src/services/invariants/check-invariants.js';

const zeros: InvariantCounts = {
  overlappingTableOccupants: 0,
  liveTablesOfFinishedReservations: 0,
  pacingBlocksOverMaxCovers: 0,
  unknownGuestServiceTags: 0,
  pendingDeliveriesWithoutJob: 0,
  overdueDeliveries: 0,
};

/** The end of a concurrency test: the invariant check of `npm run cli -- check` finds nothing on these venues (the file's queues). */
export async function expectInvariantsHold(venueIds: string[]): Promise<void> {
  expect(await checkInvariants({ venueIds, queuePrefixes: [processConfig().QUEUE_PREFIX] })).toEqual(zeros);
}
