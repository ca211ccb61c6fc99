import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { listeningUrl } from '../lib/listening-url.js';
import type { Config } from '../config.js';
import { markProcessState } from '../core/process-state.js';
import { createApp } from '../http/app.js';
import { prepareDrain } from '../http/drain.js';
import { logger } from '../logger.js';
import { apiRoutes } from '../routes/index.js';
import { EventStreams } from '../services/events/event-stream.js';

/** Requests still running this long after SIGTERM are cut (a request is normally a few ms; an export a few s). */
const drainLimitMs = 20_000;

/**
 * How long the web role keeps serving with /readyz at 503 before it stops accepting: the time a load
 * balancer needs to see the failed check and send new connections elsewhere (docs/operations.md
 * "Stopping without resets"). 5 s in production unless set; 0 elsewhere, where nothing balances.
 */
function readinessDelayMs(config: Config): number {
  return config.SHUTDOWN_READINESS_DELAY_MS ?? (config.NODE_ENV === 'production' ? 5000 : 0);
}

/** Listens on `port`, or fails with an error naming it: a server that cannot bind serves nothing. */
async function listenOn(server: Server, port: number): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException) => {
      const why =
        err.code === 'EADDRINUSE'
          ? 'is already in use'
          : err.code === 'EACCES'
            ? 'needs privileges this process lacks'
            : `cannot be bound (${err.code ?? err.message})`;
      reject(new Error(`web cannot listen: PORT ${port} ${why}`, { cause: err }));
    };
    server.once('error', failed);
    server.listen(port, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

export async function startWebRole(config: Config): Promise<() => Promise<void>> {
  const eventStreams = new EventStreams(config);
  const server = http.createServer(createApp({ routes: apiRoutes, config, eventStreams }));
  await listenOn(server, config.PORT);
  server.keepAliveTimeout = 65_000;
  // Open event streams never finish on their own: the drain ends them (clients resume elsewhere with Last-Event-ID).
  const drain = prepareDrain(server, { hardLimitMs: drainLimitMs, endStreams: () => eventStreams.closeAll() });
  const url = listeningUrl(server.address() as AddressInfo);
  logger.info({ port: config.PORT, url }, `web listening on ${url} (API under /api/v1, docs at /api/v1/docs, queues at /admin/queues)`);
  return async () => {
    // Readiness fails first while every connection is still accepted and answered: closing the
    // listener at once would reset the connections a balancer still sends before its next check.
    markProcessState('stopping');
    const delayMs = readinessDelayMs(config);
    if (delayMs > 0) {
      logger.info({ delayMs }, 'web not ready: still serving until load balancers have noticed');
      await sleep(delayMs);
    }
    await drain();
  };
}
