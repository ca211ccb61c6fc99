import { z } from 'zod';
import type { guests } from '../../db/schema/index.js';
import { component, count, instant, uuid } from '../../core/response-schemas.js';
import { allergens } from '../../lib/allergens.js';

export type GuestRow = typeof guests.$inferSelect;

/** The guest's full name, or null when neither part is known. */
export function guestName(g: Pick<GuestRow, 'firstName' | 'lastName'>): string | null {
  const name = [g.firstName, g.lastName].filter((part) => part && part.trim()).join(' ');
  return name || null;
}

const allergenList = z.array(z.enum(allergens));

export const guestSchema = component(
  'Guest',
  z.object({
    id: uuid,
    venueId: uuid,
    phone: z.string().describe('E.164'),
    name: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    email: z.string().nullable(),
    allergies: z.string().nullable(),
    allergens: allergenList,
    notes: z.string().nullable(),
    visitCount: count,
    noShowCount: count,
    cancelledCount: count,
    lastVisitAt: instant.nullable(),
    consents: z.object({ marketingEmail: z.boolean(), marketingSms: z.boolean() }),
    campaignTags: z.array(z.string()),
    serviceTags: z.array(z.string()),
    externalRef: z.string().nullable(),
    createdAt: instant,
    updatedAt: instant,
    deletedAt: instant.nullable().describe('Set while the guest is in the trash.'),
  }),
  'A guest of a venue (docs/api.md, plus venueId and deletedAt).',
);

export const reservationGuestSchema = component(
  'ReservationGuest',
  z.object({
    id: uuid,
    phone: z.string(),
    email: z.string().nullable(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    name: z.string().nullable(),
    allergies: z.string().nullable(),
    allergens: allergenList,
    notes: z.string().nullable(),
    visitCount: count,
    noShowCount: count,
    externalRef: z.string().nullable(),
    updatedAt: instant,
  }),
  'The guest of a reservation (`guestDetails`).',
);

export const guestSummarySchema = component(
  'GuestSummary',
  z.object({ name: z.string().nullable(), allergies: z.string().nullable(), allergens: allergenList }),
  'The `guest` summary carried by a reservation.',
);

/** Guest (list item) of docs/api.md, plus `venueId` and `deletedAt` (docs/guests.md). */
export function guestJson(g: GuestRow): z.output<typeof guestSchema> {
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

/** ReservationGuest (`guestDetails`) of docs/api.md. */
export function reservationGuestJson(g: GuestRow): z.output<typeof reservationGuestSchema> {
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
export function guestSummaryJson(
  g: Pick<GuestRow, 'firstName' | 'lastName' | 'allergies' | 'allergens'>,
): z.output<typeof guestSummarySchema> {
  return { name: guestName(g), allergies: g.allergies, allergens: g.allergens };
}
