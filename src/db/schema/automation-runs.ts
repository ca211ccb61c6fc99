import { pgTable, unique, uuid } from 'drizzle-orm/pg-core';
import { automations } from './automations.js';
import { createdAtColumn, idColumn } from './columns.js';
import { events } from './events.js';

/** One run of an automation for one event: the unique pair makes a replayed event job harmless. */
export const automationRuns = pgTable(
  'automation_runs',
  {
    id: idColumn(),
    automationId: uuid('automation_id')
      .notNull()
      .references(() => automations.id),
    eventId: uuid('event_id')
      .notNull()
      .references(() => events.id),
    createdAt: createdAtColumn(),
  },
  (t) => [unique('automation_runs_automation_event_key').on(t.automationId, t.eventId)],
);
