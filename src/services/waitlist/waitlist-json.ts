import { z } from 'zod';
import { waitlistStatusValues, type waitlistEntries } from '../../db/schema/index.js';
import { component, instant, serviceDate, uuid } from '../../core/response-schemas.js';

export type WaitlistEntryRow = typeof waitlistEntries.$inferSelect;

export const waitlistEntrySchema = component(
  'WaitlistEntry',
  z.object({
    id: uuid,
    venueId: uuid,
    serviceDate,
    partySize: z.number().int().min(1),
    guestId: uuid.nullable(),
    name: z.string().nullable().describe('null without guests:read'),
    phone: z.string().nullable().describe('null without guests:read'),
    notes: z.string().nullable(),
    status: z.enum(waitlistStatusValues),
    position: z.number().int(),
    quotedWaitMinutes: z.number().int().nullable().describe('what the host told the guest'),
    estimatedSeatTime: z
      .object({ from: instant, to: instant })
      .nullable()
      .describe(
        'when the party is expected to sit, from the floor; recomputed when the floor changes (docs/reservations.md "Turn times and wait quotes"); null: not estimated yet, or not before the last seating',
      ),
    estimatedWaitMinutes: z.number().int().nullable().describe('minutes from the last estimate to the expected seat time'),
    notifiedAt: instant.nullable(),
    reservationId: uuid.nullable(),
    createdAt: instant,
    updatedAt: instant,
  }),
  'A waiting-list entry (docs/operations.md "Waiting list"); single answers key it `entry`.',
);

/**
 * A waiting-list entry (docs/operations.md "Waiting list"). `name` and `phone` are guest data: without guests:read they
 * are null, as in a webhook read by such a key; guestId stays, as on a reservation.
 */
export function waitlistEntryJson(e: WaitlistEntryRow, showGuestData = true): z.output<typeof waitlistEntrySchema> {
  return {
    id: e.id,
    venueId: e.venueId,
    serviceDate: e.serviceDate,
    partySize: e.partySize,
    guestId: e.guestId,
    name: showGuestData ? e.name : null,
    phone: showGuestData ? e.phone : null,
    notes: e.notes,
    status: e.status,
    position: e.position,
    quotedWaitMinutes: e.quotedWaitMinutes,
    estimatedSeatTime:
      e.estimatedSeatFrom && e.estimatedSeatTo ? { from: e.estimatedSeatFrom.toISOString(), to: e.estimatedSeatTo.toISOString() } : null,
    estimatedWaitMinutes: e.estimatedWaitMinutes,
    notifiedAt: e.notifiedAt?.toISOString() ?? null,
    reservationId: e.reservationId,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}
