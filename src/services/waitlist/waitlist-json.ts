import type { waitlistEntries } from '../../db/schema/index.js';

export type WaitlistEntryRow = typeof waitlistEntries.$inferSelect;

/**
 * A waiting-list entry (decisions §9). `name` and `phone` are guest data: without guests:read they
 * are null, as in a webhook read by such a key; guestId stays, as on a reservation.
 */
export function waitlistEntryJson(e: WaitlistEntryRow, showGuestData = true) {
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
    notifiedAt: e.notifiedAt?.toISOString() ?? null,
    reservationId: e.reservationId,
    createdAt: e.createdAt.toISOString(),
    updatedAt: e.updatedAt.toISOString(),
  };
}
