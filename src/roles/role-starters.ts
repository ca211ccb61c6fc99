import type { Config } from '../config.js';
import { startEventsRole } from './events.js';
import { startImportsRole } from './imports.js';
import type { RoleName } from './role-names.js';
import { startTimersRole } from './timers.js';
import { startWebRole } from './web.js';
import { startWebhooksRole } from './webhooks.js';

/** Each role returns its stop function; stopping drains (HTTP: in-flight requests, workers: running jobs). */
export const roleStarters: Record<RoleName, (config: Config) => Promise<() => Promise<void>>> = {
  web: startWebRole,
  events: startEventsRole,
  webhooks: startWebhooksRole,
  imports: startImportsRole,
  timers: startTimersRole,
};
