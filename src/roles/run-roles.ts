import { config } from '../config.js';
import { closeDatabase } from '../db/close-database.js';
import { logger } from '../logger.js';
import { closeQueues } from '../queues/queues.js';
import { startMetricsServer } from '../metrics/metrics-server.js';
import { closeRedis } from '../redis.js';
import { settleEnqueuedEvents } from '../services/events/outbox.js';
import { allRoles, roleStarters, type RoleName } from './role-starters.js';

/** Starts the given roles in this process and drains them on SIGTERM/SIGINT. */
export async function runRoles(roles: RoleName[]): Promise<void> {
  // One metrics port per process, whatever roles it runs (one registry): `npm start` serves them all on 9464.
  // Opened first: a port already taken stops the start-up before any role has begun.
  const metricsPort = config.METRICS_PORT ?? 9464 + allRoles.indexOf(roles[0]);
  const metrics = metricsPort === 0 ? null : await startMetricsServer(metricsPort);
  if (metrics) logger.info({ port: metrics.port }, `metrics on http://127.0.0.1:${metrics.port}/metrics, liveness on /healthz`);
  const stops: Array<{ role: RoleName; stop: () => Promise<void> }> = [];
  for (const role of roles) {
    stops.push({ role, stop: await roleStarters[role]() });
    logger.info({ role }, 'role started');
  }
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const stopRole = async ({ role, stop }: (typeof stops)[number]) => {
      await stop().catch((err: unknown) => logger.error({ err, role }, 'role failed to stop cleanly'));
      logger.info({ role }, 'role stopped');
    };
    // Web first: it stops accepting at once and finishes its requests (which may enqueue jobs);
    // then the workers together, each finishing its running jobs (the others stay queued).
    await Promise.all(stops.filter((s) => s.role === 'web').map(stopRole));
    await Promise.all(stops.filter((s) => s.role !== 'web').map(stopRole));
    // Last: a supervisor keeps seeing the process alive while it drains.
    await metrics?.close();
    await settleEnqueuedEvents();
    await closeQueues();
    await closeRedis();
    await closeDatabase(5);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
