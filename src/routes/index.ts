import type { AnyRoute } from '../http/define-route.js';
import { metaRoutes } from './meta.js';
import { venueRoutes } from './venues.js';
import { guestRoutes } from './guests.js';
import { serviceTagRoutes } from './service-tags.js';
import { venueConfigRoutes } from './venue-config.js';
import { floorRoutes } from './floor.js';

/** Every API route; each resource module exports its list. */
export const apiRoutes: AnyRoute[] = [...metaRoutes(() => apiRoutes), ...venueRoutes, ...guestRoutes, ...serviceTagRoutes, ...venueConfigRoutes, ...floorRoutes];
