import type { AnyRoute } from '../http/define-route.js';
import { metaRoutes } from './meta.js';
import { venueRoutes } from './venues.js';
import { eventRoutes } from './events.js';
import { automationRoutes } from './automations.js';
import { webhookEndpointRoutes } from './webhook-endpoints.js';
import { webhookSecretRoutes } from './webhook-secret.js';
import { webhookDeliveryRoutes } from './webhook-deliveries.js';
import { guestRoutes } from './guests.js';
import { serviceTagRoutes } from './service-tags.js';
import { importRoutes } from './imports.js';
import { venueConfigRoutes } from './venue-config.js';
import { floorRoutes } from './floor.js';
import { waitlistRoutes } from './waitlist.js';
import { reportRoutes } from './reports.js';
import { exportRoutes } from './exports.js';
import { availabilityRoutes } from './availability.js';
import { reservationRoutes } from './reservations.js';

/** Every API route; each resource module exports its list. */
export const apiRoutes: AnyRoute[] = [
  ...metaRoutes(() => apiRoutes),
  ...venueRoutes,
  ...eventRoutes,
  ...automationRoutes,
  ...webhookEndpointRoutes,
  ...webhookSecretRoutes,
  ...webhookDeliveryRoutes,
  ...guestRoutes,
  ...serviceTagRoutes,
  ...importRoutes,
  ...venueConfigRoutes,
  ...floorRoutes,
  ...availabilityRoutes,
  ...reservationRoutes,
  ...waitlistRoutes,
  ...reportRoutes,
  ...exportRoutes,
];
