import type { Config } from '../config.js';
import { markProcessState } from '../core/process-state.js';
import { closeDatabase } from '../db/close-database.js';
import { logger } from '../logger.js';
import { closeQueues } from '../queues/queues.js';
import { onWorkerConnectionLost } from '../queues/start-worker.js';
import { startMetricsServer } from '../monitoring/metrics-server.js';
import { closeRedis } from '../redis.js';
import { settleEnqueuedEvents } from '../services/outbox/outbox.js';
import { settleEventNumbering } from '../services/outbox/event-sequencer.js';
import { setTimeout as delay } from 'node:timers/promises';
import { allRoles, type RoleName } from './role-names.js';
import { roleStarters } from './role-starters.js';

/** Roles of this process: `started` rejects when one cannot start; `ended` resolves with the code the process exits with. */
export interface RunningRoles {
  started: Promise<void>;
  /** 0 once a SIGTERM/SIGINT stop has drained everything; 1 at once (even while starting) when a worker's queue connection is lost for good. */
  ended: Promise<number>;
}

/** Starts the given roles in this process and drains them on SIGTERM/SIGINT. */
export function runRoles(config: Config, roles: RoleName[]): RunningRoles {
  let end!: (code: number) => void;
  const ended = new Promise<number>((resolve) => (end = resolve));
  return { started: startRoles(config, roles, end), ended };
}

async function startRoles(config: Config, roles: RoleName[], end: (code: number) => void): Promise<void> {
  // One metrics port per process, whatever roles it runs (one registry): `npm start` serves them all on 9464.
  // Opened first: a port already taken stops the start-up before any role has begun.
  const metricsPort = config.METRICS_PORT ?? 9464 + allRoles.indexOf(roles[0]);
  const metrics = metricsPort === 0 ? null : await startMetricsServer(config, metricsPort);
  if (metrics) logger.info({ port: metrics.port, url: metrics.url }, `metrics on ${metrics.url}/metrics, liveness on /healthz`);
  // A worker that can no longer reach its queue serves nothing: it exits for its supervisor to
  // restart it, rather than stay up looking alive. Its running jobs go to another worker once their locks expire.
  onWorkerConnectionLost((queue) => {
    logger.fatal({ queue, giveUpAfterSeconds: config.REDIS_GIVE_UP_AFTER_SECONDS }, 'queue connection lost for good: exiting');
    end(1);
  });
  const stops: Array<{ role: RoleName; stop: () => Promise<void> }> = [];
  for (const role of roles) {
    stops.push({ role, stop: await roleStarters[role](config) });
    logger.info({ role }, 'role started');
  }
  markProcessState('serving');
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Readiness fails from now on (the web role keeps serving a while: src/roles/web.ts).
    markProcessState('stopping');
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
    // The numbering of the last commits is waited for a moment only: a run stuck on a PostgreSQL that
    // does not answer must not hold the stop (the sweeper numbers whatever it leaves).
    await Promise.all([settleEnqueuedEvents(), Promise.race([settleEventNumbering(), delay(numberingWaitMs)])]);
    await closeQueues();
    await closeRedis();
    await closeDatabase(5);
    end(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/** How long a stopping process waits for its event numbering run to end. */
const numberingWaitMs = 1000;
