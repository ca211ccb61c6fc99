import { sql } from 'drizzle-orm';
import { index, integer, pgTable, text, unique, uuid } from 'drizzle-orm/pg-core';
import { automationRuns } from './automation-runs.js';
import { automations } from './automations.js';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { events } from './events.js';

export const deliveryStatuses = ['pending', 'delivered', 'discarded'] as const;
export const discardReasons = ['max_attempts', 'automation_inactive', 'endpoint_disabled'] as const;

/**
 * One webhook of an automation run (docs/webhooks.md). The envelope is built at the first attempt and
 * kept as text, byte for byte, for every retry and redelivery. The row is the truth; the BullMQ job
 * (jobId = id) only schedules attempts.
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id').notNull(),
    venueId: uuid('venue_id').notNull(),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    eventType: text('event_type').notNull(),
    automationId: uuid('automation_id')
      .notNull()
      .references(() => automations.id),
    runId: uuid('run_id')
      .notNull()
      .references(() => automationRuns.id),
    actionIndex: integer('action_index').notNull(),
    /** `automation:<runId>:<actionIndex>`: the envelope id and X-Service-Idempotency-Key. */
    idempotencyKey: text('idempotency_key').notNull().unique(),
    /** Where it goes: an address of the action (organisation secret) or a destination (its secret). */
    destination: text('destination', { enum: ['url', 'endpoint'] }).notNull(),
    /** The destination; for the venue's main destination, resolved when first known. */
    endpointId: uuid('endpoint_id'),
    /** The address of the action, or the destination's address at the last attempt. */
    url: text('url'),
    status: text('status', { enum: deliveryStatuses }).notNull().default('pending'),
    /** Attempts of the current cycle (a redelivery starts again at 0). */
    attempts: integer('attempts').notNull().default(0),
    /** Attempts over the delivery's whole life: the number of the next row of its attempt log. */
    lifetimeAttempts: integer('lifetime_attempts').notNull().default(0),
    nextAttemptAt: instant('next_attempt_at'),
    lastAttemptAt: instant('last_attempt_at'),
    lastResponseStatus: integer('last_response_status'),
    lastError: text('last_error'),
    discardReason: text('discard_reason', { enum: discardReasons }),
    payload: text('payload'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    unique('webhook_deliveries_run_action_key').on(t.runId, t.actionIndex),
    index('webhook_deliveries_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('webhook_deliveries_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
    // GET /webhook-deliveries?venueId= / ?automationId=: by the organisation's index alone a page read
    // every other venue's or automation's deliveries before it (75 / 261 ms on a group of 200 venues).
    index('webhook_deliveries_venue_created_idx').on(t.venueId, t.createdAt, t.id),
    index('webhook_deliveries_automation_created_idx').on(t.automationId, t.createdAt, t.id),
    index('webhook_deliveries_pending_idx')
      .on(t.nextAttemptAt)
      .where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_automation_pending_idx')
      .on(t.automationId)
      .where(sql`${t.status} = 'pending'`),
    // Disabling a destination discards its pending deliveries; a recovery reads its deliveries by creation time.
    index('webhook_deliveries_endpoint_pending_idx')
      .on(t.endpointId)
      .where(sql`${t.status} = 'pending'`),
    index('webhook_deliveries_endpoint_created_idx').on(t.endpointId, t.createdAt),
    // The daily purge reads only the deliveries concluded more than 30 days ago.
    index('webhook_deliveries_concluded_idx')
      .on(t.updatedAt)
      .where(sql`${t.status} in ('delivered', 'discarded')`),
  ],
);
