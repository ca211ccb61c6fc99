import { index, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { apiKeys } from './api-keys.js';
import { createdAtColumn, instant } from './columns.js';

export const idempotencyKeys = pgTable(
  'idempotency_keys',
  {
    apiKeyId: uuid('api_key_id')
      .notNull()
      .references(() => apiKeys.id, { onDelete: 'cascade' }),
    key: text('key').notNull(),
    operation: text('operation').notNull(),
    requestHash: text('request_hash').notNull(),
    state: text('state', { enum: ['running', 'done'] }).notNull(),
    lockedAt: instant('locked_at').notNull(),
    responseStatus: integer('response_status'),
    responseBody: text('response_body'),
    createdAt: createdAtColumn(),
  },
  // The daily purge reads only the keys older than 24 h.
  (t) => [primaryKey({ columns: [t.apiKeyId, t.key] }), index('idempotency_keys_created_idx').on(t.createdAt)],
);
