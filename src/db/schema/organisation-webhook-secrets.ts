import { integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, instant, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';

/**
 * The organisation secret that signs deliveries to addresses written in actions. Version 1 is
 * generated on first use and never shown; POST /webhook-secret/rotate generates the next ones.
 */
export const organisationWebhookSecrets = pgTable('organisation_webhook_secrets', {
  organisationId: uuid('organisation_id')
    .primaryKey()
    .references(() => organisations.id),
  currentSecret: text('current_secret').notNull(),
  previousSecret: text('previous_secret'),
  secretVersion: integer('secret_version').notNull().default(1),
  previousSecretExpiresAt: instant('previous_secret_expires_at').notNull(),
  createdAt: createdAtColumn(),
  updatedAt: updatedAtColumn(),
});
