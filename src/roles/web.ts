import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { listeningUrl } from '../lib/listening-url.js';
import { config } from '../config.js';
import { createApp } from '../http/app.js';
import { prepareDrain } from '../http/drain.js';
import { logger } from '../logger.js';
import { apiRoutes } from '../routes/index.js';
import { eventStreams } from '../services/events/event-stream.js';

/** Requests still running this long after SIGTERM are cut (a request is normally a few ms; an export a few s). */
const drainLimitMs = 20_000;

export async function startWebRole(): Promise<() => Promise<void>> {
  const app = createApp({ routes: apiRoutes });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(config.PORT, () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;
  // Open event streams never finish on their own: the drain ends them (clients resume elsewhere with Last-Event-ID).
  const drain = prepareDrain(server, { hardLimitMs: drainLimitMs, endStreams: () => eventStreams.closeAll() });
  const url = listeningUrl(server.address() as AddressInfo);
  logger.info({ port: config.PORT, url }, `web listening on ${url} (API under /api/v1, docs at /api/v1/docs, queues at /admin/queues)`);
  return drain;
}
