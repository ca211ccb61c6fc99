import { z } from 'zod';
import { optionalText } from '../../core/validation.js';
import { allergens } from '../../lib/allergens.js';

export const allergenSchema = z.enum(allergens);

/**
 * The contact fields a guest can be created from, shared by POST /guests, imports and the `guest`
 * of a reservation. `phone` is any written form; it is normalised with the venue's country.
 */
export const guestContactFields = {
  phone: z.string().max(40),
  firstName: optionalText(100),
  lastName: optionalText(100),
  email: z.email().max(254).nullable(),
  allergies: optionalText(2000),
  allergens: z
    .array(allergenSchema)
    .max(allergens.length * 2)
    .transform((list) => [...new Set(list)]),
  notes: optionalText(5000),
};

/** The profile fields beyond contact: consents, tags and the client's own identifier. */
export const guestProfileFields = {
  consents: z.object({ marketingEmail: z.boolean().optional(), marketingSms: z.boolean().optional() }).strict(),
  campaignTags: z
    .array(z.string().trim().min(1).max(100))
    .max(50)
    .transform((list) => [...new Set(list)]),
  serviceTags: z.array(z.string().trim().min(1).max(100)).max(50),
  externalRef: z.string().trim().min(1).max(200).nullable(),
};

export const guestContactSchema = z.object({
  phone: guestContactFields.phone,
  firstName: guestContactFields.firstName.optional(),
  lastName: guestContactFields.lastName.optional(),
  email: guestContactFields.email.optional(),
  allergies: guestContactFields.allergies.optional(),
  allergens: guestContactFields.allergens.optional(),
  notes: guestContactFields.notes.optional(),
});

export type GuestContactInput = z.output<typeof guestContactSchema>;

export const guestFieldsSchema = z.object({ ...guestContactFields, ...guestProfileFields });
/** Every writable field of a guest, each optional (PATCH, import rows). */
export type GuestFieldsPatch = Partial<z.output<typeof guestFieldsSchema>>;
