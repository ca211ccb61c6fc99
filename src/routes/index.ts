import type { AnyRoute } from '../http/define-route.js';
import { metaRoutes } from './meta.js';
import { venueRoutes } from './venues.js';
import { venueConfigRoutes } from './venue-config.js';

/** Every API route; each resource module exports its list. */
export const apiRoutes: AnyRoute[] = [...metaRoutes(() => apiRoutes), ...venueRoutes, ...venueConfigRoutes];
