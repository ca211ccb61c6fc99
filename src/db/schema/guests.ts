import { sql } from 'drizzle-orm';
import { index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import type { Allergen } from '../../lib/allergens.js';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

export interface GuestConsents {
  marketingEmail: boolean;
  marketingSms: boolean;
}

/** The guest address book: one guest belongs to one venue; phone is unique among live guests of a venue. */
export const guests = pgTable(
  'guests',
  {
    id: idColumn(),
    /** Denormalised from the venue so that organisation-wide lists need no join. */
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    /** E.164. */
    phone: text('phone').notNull(),
    /** Digits of the national form of the phone (`0612345678`), so that search finds it as people write it. */
    phoneNational: text('phone_national').notNull(),
    firstName: text('first_name'),
    lastName: text('last_name'),
    email: text('email'),
    allergies: text('allergies'),
    allergens: text('allergens').array().notNull().default([]).$type<Allergen[]>(),
    notes: text('notes'),
    visitCount: integer('visit_count').notNull().default(0),
    noShowCount: integer('no_show_count').notNull().default(0),
    cancelledCount: integer('cancelled_count').notNull().default(0),
    lastVisitAt: instant('last_visit_at'),
    consents: jsonb('consents').notNull().default({ marketingEmail: false, marketingSms: false }).$type<GuestConsents>(),
    campaignTags: text('campaign_tags').array().notNull().default([]),
    /** Names of the venue's service tags; renaming or deleting a tag rewrites them. */
    serviceTags: text('service_tags').array().notNull().default([]),
    externalRef: text('external_ref'),
    /** Lower-case unaccented name, e-mail and phone digits (functions of migration 0004), searched with trigrams. */
    searchText: text('search_text')
      .notNull()
      .generatedAlwaysAs(sql`guest_search_text(first_name, last_name, email, phone, phone_national)`),
    /** Set when the guest is moved to the trash; purged 30 days later. */
    deletedAt: instant('deleted_at'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex('guests_venue_phone_live_idx')
      .on(t.venueId, t.phone)
      .where(sql`${t.deletedAt} is null`),
    uniqueIndex('guests_venue_external_ref_live_idx')
      .on(t.venueId, t.externalRef)
      .where(sql`${t.deletedAt} is null and ${t.externalRef} is not null`),
    index('guests_venue_created_idx').on(t.venueId, t.createdAt, t.id),
    index('guests_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('guests_venue_updated_idx').on(t.venueId, t.updatedAt, t.id),
    index('guests_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
    index('guests_org_email_idx').on(t.organisationId, sql`lower(${t.email})`),
    index('guests_org_external_ref_idx').on(t.organisationId, t.externalRef),
    index('guests_trash_idx')
      .on(t.deletedAt)
      .where(sql`${t.deletedAt} is not null`),
    // The venue in the same GIN index as the trigrams (btree_gin): a venue's search intersects the
    // venue's entries with the words' while scanning, instead of reading every venue's matches of
    // words common in the organisation (phone digits that all numbers share) and dropping them after.
    // A search without a venue uses the trigrams alone, as a trigram-only index would.
    index('guests_venue_search_idx').using('gin', t.venueId, t.searchText.op('gin_trgm_ops')),
    // The digit trigrams of the search text with the venue in each key (function of migration 0032),
    // for a venue's search by phone digits: numbers share `330`, `300`, `000`, which the index above
    // checks against candidates across the organisation; here the venue's own postings bound the
    // work. The venue column too, so that a generic plan, blind to the values, rates it as selective
    // as the index above (docs/guests.md "Search").
    index('guests_venue_digits_idx').using('gin', t.venueId, sql`guest_digit_trigrams(${t.venueId}, ${t.searchText})`),
  ],
);
