import { sql } from 'drizzle-orm';
import { index, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import type { AutomationConditions } from '../../lib/automation-conditions.js';
import { createdAtColumn, idColumn, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

export interface AutomationAction {
  type: 'partner_notification';
  /** An HTTPS address, signed with the organisation secret. */
  url: string | null;
  /** A registered destination of the venue, signed with its own secret. */
  endpointId: string | null;
  delayMinutes: number;
}

export const automationStatuses = ['active', 'inactive', 'archived'] as const;

/** A rule of a venue: on these event types, when the conditions hold, run the action (docs/webhooks.md). */
export const automations = pgTable(
  'automations',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    name: text('name').notNull(),
    eventTypes: text('event_types').array().notNull(),
    conditions: jsonb('conditions').notNull().$type<AutomationConditions>(),
    action: jsonb('action').notNull().$type<AutomationAction>(),
    status: text('status', { enum: automationStatuses }).notNull().default('active'),
    createdAt: createdAtColumn(),
    updatedAt: updatedAtColumn(),
  },
  (t) => [
    index('automations_active_venue_idx')
      .on(t.venueId)
      .where(sql`${t.status} = 'active'`),
    index('automations_org_created_idx').on(t.organisationId, t.createdAt, t.id),
    index('automations_org_updated_idx').on(t.organisationId, t.updatedAt, t.id),
  ],
);
