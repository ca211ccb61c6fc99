import type { Server } from 'node:http';
import { config } from '../config.js';
import { createApp } from '../http/app.js';
import { logger } from '../logger.js';
import { apiRoutes } from '../routes/index.js';
import { eventStreams } from '../services/events/event-stream.js';

export async function startWebRole(): Promise<() => Promise<void>> {
  const app = createApp({ routes: apiRoutes });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(config.PORT, () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  logger.info({ port: config.PORT }, `web listening on http://127.0.0.1:${config.PORT} (API under /api/v1, docs at /api/v1/docs, queues at /admin/queues)`);
  return async () => {
    // Stop accepting, let in-flight requests finish, then drop idle keep-alive sockets.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Open event streams never finish on their own: they are ended here (clients resume elsewhere).
    await eventStreams.closeAll();
    server.closeIdleConnections();
    const timer = setTimeout(() => server.closeAllConnections(), 10_000);
    await closed;
    clearTimeout(timer);
  };
}
