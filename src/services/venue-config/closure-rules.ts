import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { Tx } from '../../db/client.js';
import { closures } from '../../db/schema/index.js';
import { ApiError } from '../../core/errors.js';
import { component, instant, serviceDate, uuid } from '../../core/response-schemas.js';
import { assertShiftsOfVenue } from './shift-rules.js';
import type { RuleKind } from './venue-rules.js';

export type ClosureRow = typeof closures.$inferSelect;

export interface ClosureFields {
  from: string;
  to: string;
  shiftIds: string[];
  reason: string | null;
}

export const closureSchema = component(
  'Closure',
  z.object({
    id: uuid,
    venueId: uuid,
    from: serviceDate,
    to: serviceDate,
    shiftIds: z.array(uuid).describe('Empty: the whole day.'),
    reason: z.string().nullable(),
    updatedAt: instant,
  }),
  'Days (both ends included) when a venue, or some of its shifts, is closed.',
);

export function closureJson(c: ClosureRow): z.output<typeof closureSchema> {
  return {
    id: c.id,
    venueId: c.venueId,
    from: c.from,
    to: c.to,
    shiftIds: c.shiftIds,
    reason: c.reason,
    updatedAt: c.updatedAt.toISOString(),
  };
}

async function checkClosure(tx: Tx, venueId: string, closure: ClosureFields): Promise<void> {
  if (closure.from > closure.to) throw ApiError.invalid(['from', 'to'], 'from must not be after to.');
  await assertShiftsOfVenue(tx, venueId, closure.shiftIds, 'shiftIds');
}

export const closureKind: RuleKind<ClosureRow, ClosureFields> = {
  table: closures,
  label: 'Closure',
  // By date: the order a calendar shows them in.
  naturalOrder: [{ column: sql`${closures.from}::text`, kind: 'text', read: (c) => c.from }],
  check: checkClosure,
};
