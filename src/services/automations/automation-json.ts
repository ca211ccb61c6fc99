import type { automations } from '../../db/schema/index.js';

export type AutomationRow = typeof automations.$inferSelect;

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
