import { integer, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core';
import { instant } from './columns.js';
import { webhookDeliveries } from './webhook-deliveries.js';

/**
 * The attempt log of a delivery (GET /webhook-deliveries/{id}/attempts): one row per attempt,
 * numbered over the delivery's whole life, kept as long as the delivery row (deleted with it).
 */
export const webhookDeliveryAttempts = pgTable(
  'webhook_delivery_attempts',
  {
    deliveryId: uuid('delivery_id')
      .notNull()
      .references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
    attempt: integer('attempt').notNull(),
    startedAt: instant('started_at').notNull(),
    durationMs: integer('duration_ms').notNull(),
    responseStatus: integer('response_status'),
    error: text('error'),
    /** The first 1,024 bytes of the answer's body as UTF-8 text; null without an answer. */
    responseBodyExcerpt: text('response_body_excerpt'),
    /**
     * The W3C `traceparent` of the attempt's span while tracing was on (docs/operations.md
     * "Tracing"): the attempt log shows its trace id; the next attempt's span links to it. Null when off.
     */
    traceparent: text('traceparent'),
  },
  (t) => [primaryKey({ columns: [t.deliveryId, t.attempt] })],
);
