import { foreignKey, integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, instant } from './columns.js';
import { idempotencyKeys } from './idempotency-keys.js';

/**
 * The secret (sealed) that a request showing a new secret — a rotation or an endpoint creation —
 * generated under an Idempotency-Key, so that repeating the key returns the same secret while it is
 * current (docs/webhooks.md rule 5). Bound to the idempotency key row: forgotten together with it.
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
    foreignKey({
      columns: [t.apiKeyId, t.idempotencyKey],
      foreignColumns: [idempotencyKeys.apiKeyId, idempotencyKeys.key],
      name: 'webhook_secret_rotations_idempotency_fk',
    }).onDelete('cascade'),
  ],
);
