import { z } from 'zod';
import { automationStatuses, reservationSourceValues, type automations } from '../../db/schema/index.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { eventTypes } from '../../lib/event-catalogue.js';

export type AutomationRow = typeof automations.$inferSelect;

export const automationSchema = component(
  'Automation',
  z.object({
    id: uuid,
    venueId: uuid,
    name: z.string(),
    eventTypes: z.array(z.enum(eventTypes)),
    conditions: z.object({
      partySizeMin: z.number().int().nullable(),
      partySizeMax: z.number().int().nullable(),
      sources: z.array(z.enum(reservationSourceValues)).nullable(),
    }),
    action: z.object({
      type: z.literal('partner_notification'),
      url: z.string().nullable(),
      endpointId: uuid.nullable(),
      delayMinutes: z.number().int().min(0),
    }),
    status: z.enum(automationStatuses),
    createdAt: instant,
    updatedAt: instant,
  }),
  'On these events, when the conditions hold, notify a partner (docs/webhooks.md).',
);

export function automationJson(a: AutomationRow) {
  return {
    id: a.id,
    venueId: a.venueId,
    name: a.name,
    eventTypes: a.eventTypes,
    conditions: a.conditions,
    action: a.action,
    status: a.status,
    createdAt: a.createdAt.toISOString(),
    updatedAt: a.updatedAt.toISOString(),
  };
}
