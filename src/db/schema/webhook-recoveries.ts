import { integer, pgTable, uuid } from 'drizzle-orm/pg-core';
import { createdAtColumn, idColumn, instant } from './columns.js';
import { webhookEndpoints } from './webhook-endpoints.js';

/** A recovery (POST /webhook-endpoints/{id}/recover): which window of a destination's discarded deliveries was sent again. */
export const webhookRecoveries = pgTable('webhook_recoveries', {
  id: idColumn(),
  organisationId: uuid('organisation_id').notNull(),
  endpointId: uuid('endpoint_id')
    .notNull()
    .references(() => webhookEndpoints.id, { onDelete: 'cascade' }),
  since: instant('since').notNull(),
  until: instant('until').notNull(),
  /** How many deliveries started a new cycle. */
  deliveries: integer('deliveries').notNull(),
  createdAt: createdAtColumn(),
});
