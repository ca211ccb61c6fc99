import { pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn } from './columns.js';
import { events } from './events.js';
import { waitlistEntries } from './waitlist-entries.js';

/**
 * A freed table offered to a waiting-list entry (compatible_table_freed). One row per event that
 * freed the table: worker-events may process that event twice (a crash before its dispatch mark),
 * and the primary key makes the second run emit nothing.
 */
export const waitlistOffers = pgTable('waitlist_offers', {
  freedByEventId: uuid('freed_by_event_id')
    .primaryKey()
    .references(() => events.id),
  waitlistEntryId: uuid('waitlist_entry_id')
    .notNull()
    .references(() => waitlistEntries.id, { onDelete: 'cascade' }),
  /** The table, or the tables of the combination, that fit the party. */
  tableIds: uuid('table_ids').array().notNull(),
  createdAt: createdAtColumn(),
});
