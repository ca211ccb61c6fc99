import { startEventsRole } from './events.js';
import { startImportsRole } from './imports.js';
import { startTimersRole } from './timers.js';
import { startWebRole } from './web.js';
import { startWebhooksRole } from './webhooks.js';

export type RoleName = 'web' | 'events' | 'webhooks' | 'imports' | 'timers';

/** Every role, in a fixed order: a role's index also gives its default metrics port (9464 + index). */
export const allRoles: RoleName[] = ['web', 'events', 'webhooks', 'imports', 'timers'];

/** Each role returns its stop function; stopping drains (HTTP: in-flight requests, workers: running jobs). */
export const roleStarters: Record<RoleName, () => Promise<() => Promise<void>>> = {
  web: startWebRole,
  events: startEventsRole,
  webhooks: startWebhooksRole,
  imports: startImportsRole,
  timers: startTimersRole,
};
