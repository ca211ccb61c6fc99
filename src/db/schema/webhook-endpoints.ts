import { sql } from 'drizzle-orm';
import { boolean, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core';
import { signatureSchemes } from '../../lib/webhook-signature.js';
import { createdAtColumn, idColumn, instant, updatedAtColumn } from './columns.js';
import { organisations } from './organisations.js';
import { venues } from './venues.js';

export const endpointHealthStates = ['healthy', 'failing', 'disabled'] as const;

/** A registered destination of a venue with its own versioned signing secret (sealed with SECRETS_KEY). */
export const webhookEndpoints = pgTable(
  'webhook_endpoints',
  {
    id: idColumn(),
    organisationId: uuid('organisation_id')
      .notNull()
      .references(() => organisations.id),
    venueId: uuid('venue_id')
      .notNull()
      .references(() => venues.id),
    url: text('url').notNull(),
    /** How deliveries are signed, and so the format of the secrets (docs/webhooks.md "Signature schemes"); chosen at registration. */
    signatureScheme: text('signature_scheme', { enum: signatureSchemes }).notNull().default('service-v1'),
    isActive: boolean('is_active').notNull().default(true),
    currentSecret: text('current_secret').notNull(),
    previousSecret: text('previous_secret'),
    secretVersion: integer('secret_version').notNull().default(1),
    previousSecretExpiresAt: instant('previous_secret_expires_at').notNull(),
    // Health (docs/webhooks.md "Endpoint health"): written with every attempt made to the destination.
    consecutiveFailures: integer('consecutive_failures').notNull().default(0),
    failingSince: instant('failing_since'),
    lastSuccessAt: instant('last_success_at'),
    /** Set when the platform turned the destination off after failing too long; cleared by re-enabling it. */
    disabledAt: instant('disabled_at'),
    // Written once here, so that the answers and the metrics cannot disagree on what a state means.
    healthState: text('health_state', { enum: endpointHealthStates })
      .notNull()
      .generatedAlwaysAs(
        sql`case when disabled_at is not null then 'disabled' when consecutive_failures > 0 then 'failing' else 'healthy' end`,
      ),
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
