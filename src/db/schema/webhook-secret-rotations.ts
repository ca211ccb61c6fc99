import { foreignKey, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, instant } from './columns.js';
import { idempotencyKeys } from './idempotency-keys.js';

/**
 * What a rotation made with an Idempotency-Key generated, so that repeating the key returns the same
 * secret (sealed) while it is current (interface.md §6 rule 5). Bound to the idempotency key row: it
 * is forgotten together with it.
 */
export const webhookSecretRotations = pgTable(
  'webhook_secret_rotations',
  {
    apiKeyId: uuid('api_key_id').notNull(),
    idempotencyKey: text('idempotency_key').notNull(),
    organisationId: uuid('organisation_id').notNull(),
    /** null: the organisation secret. */
    endpointId: uuid('endpoint_id'),
    secretVersion: integer('secret_version').notNull(),
    secret: text('secret').notNull(),
    previousSecretExpiresAt: instant('previous_secret_expires_at').notNull(),
    createdAt: createdAtColumn(),
  },
  (t) => [
    primaryKey({ columns: [t.apiKeyId, t.idempotencyKey] }),
    foreignKey({ columns: [t.apiKeyId, t.idempotencyKey], foreignColumns: [idempotencyKeys.apiKeyId, idempotencyKeys.key], name: 'webhook_secret_rotations_idempotency_fk' }).onDelete('cascade'),
  ],
);
