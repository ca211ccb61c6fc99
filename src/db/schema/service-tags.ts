import { sql } from 'drizzle-orm';
import { index, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { venues } from './venues.js';

/** The tags a venue puts on guests (VIP, regular…); names are unique per venue whatever their case. */
export const serviceTags = pgTable(
  'service_tags',
  {
    id: idColumn(),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    name: text('name').notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    uniqueIndex('service_tags_venue_name_idx').on(t.venueId, sql`lower(${t.name})`),
    index('service_tags_venue_created_idx').on(t.venueId, t.createdAt, t.id),
    index('service_tags_venue_updated_idx').on(t.venueId, t.updatedAt, t.id),
  ],
);
