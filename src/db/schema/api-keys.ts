import { index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant } from './columns.js';
import { organisations } from './organisations.js';

export const apiKeys = pgTable(
  'api_keys',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['live', 'test', 'publishable'] }).notNull(),
    keyHash: text('key_hash').notNull().unique(),
    displayPrefix: text('display_prefix').notNull(),
    scopes: text('scopes').array().notNull(),
    venueIds: uuid('venue_ids').array(),
    allowedOrigins: text('allowed_origins').array().notNull().default([]),
    /** Overrides the deployment's per-minute limit for this key (null: the default). */
    rateLimitPerMinute: integer('rate_limit_per_minute'),
    revokedAt: instant('revoked_at'),
    createdAt: createdAtColumn(),
  },
  (t) => [index('api_keys_org_idx').on(t.organisationId)],
);
