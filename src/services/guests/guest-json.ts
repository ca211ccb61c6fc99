import type { guests } from '../../db/schema/index.js';

export type GuestRow = typeof guests.$inferSelect;

/** The guest's full name, or null when neither part is known. */
export function guestName(g: Pick<GuestRow, 'firstName' | 'lastName'>): string | null {
  const name = [g.firstName, g.lastName].filter((part) => part && part.trim()).join(' ');
  return name || null;
}

/** Guest (list item) of interface.md §2, plus `venueId` and `deletedAt` (decisions §8). */
export function guestJson(g: GuestRow) {
  return {
    id: g.id,
    venueId: g.venueId,
    phone: g.phone,
    name: guestName(g),
    firstName: g.firstName,
    lastName: g.lastName,
    email: g.email,
    allergies: g.allergies,
    allergens: g.allergens,
    notes: g.notes,
    visitCount: g.visitCount,
    noShowCount: g.noShowCount,
    cancelledCount: g.cancelledCount,
    lastVisitAt: g.lastVisitAt?.toISOString() ?? null,
    consents: { marketingEmail: g.consents.marketingEmail, marketingSms: g.consents.marketingSms },
    campaignTags: g.campaignTags,
    serviceTags: g.serviceTags,
    externalRef: g.externalRef,
    createdAt: g.createdAt.toISOString(),
    updatedAt: g.updatedAt.toISOString(),
    deletedAt: g.deletedAt?.toISOString() ?? null,
  };
}

/** ReservationGuest (`guestDetails`) of interface.md §2. */
export function reservationGuestJson(g: GuestRow) {
  return {
    id: g.id,
    phone: g.phone,
    email: g.email,
    firstName: g.firstName,
    lastName: g.lastName,
    name: guestName(g),
    allergies: g.allergies,
    allergens: g.allergens,
    notes: g.notes,
    visitCount: g.visitCount,
    noShowCount: g.noShowCount,
    externalRef: g.externalRef,
    updatedAt: g.updatedAt.toISOString(),
  };
}

/** The `guest` summary carried by a reservation: name, allergies, allergens. */
export function guestSummaryJson(g: Pick<GuestRow, 'firstName' | 'lastName' | 'allergies' | 'allergens'>) {
  return { name: guestName(g), allergies: g.allergies, allergens: g.allergens };
}
