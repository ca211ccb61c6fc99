import type { AuthContext } from '../core/auth-context.js';

declare global {
  namespace Express {
    interface Request {
      requestId: string;
      auth?: AuthContext;
      /** The route pattern of the metrics label (`/api/v1/venues/:id`); unset until a route takes the request. */
      routePattern?: string;
    }
  }
}
