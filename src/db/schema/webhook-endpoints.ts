import { boolean, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

/** A registered destination of a venue with its own versioned signing secret (sealed with SECRETS_KEY). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id').notNull().references(() => organisations.id),
    venueId: uuid('venue_id').notNull().references(() => venues.id),
    url: text('url').notNull(),
    isActive: boolean('is_active').notNull().default(true),
    currentSecret: text('current_secret').notNull(),
    previousSecret: text('previous_secret'),
    secretVersion: integer('secret_version').notNull().default(1),
    previousSecretExpiresAt: instant('previous_secret_expires_at').notNull(),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    // The venue's main destination is its first registered one.
    index('webhook_endpoints_venue_created_idx').on(t.venueId, t.createdAt, t.id),
    index('webhook_endpoints_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('webhook_endpoints_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
  ],
);
