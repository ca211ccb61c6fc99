// Scenario: SIGTERM to a web process, or to the combined process of `npm start` (every role in one),
// while keep-alive clients keep it busy, as a deploy or a scale-in does. Clients that find it gone (connection refused) go to a second web process, as behind a load
// balancer; a request that was sent and then lost (reset, or never answered) is what must not happen.
import {
  awaitWebhooks,
  bookingBody,
  callApi,
  createChaosTenant,
  describeTraffic,
  roleEnv,
  routeBookingsTo,
  seconds,
  sleep,
  startDestination,
  Tally,
  trafficFigures,
  type TrafficFigures,
} from './chaos-world.js';
import { endProcess, startOwnRedis, startRole, type RoleProcess } from './own-processes.js';

export interface SigtermDrainOptions {
  databaseUrl: string;
  /**
   * The process stopped: a web-role process, or the combined process of `npm start` (every role in
   * one process: its web role must stop accepting first, then its workers finish their jobs).
   */
  stopped?: 'web' | 'all';
  clients?: number;
  beforeMs?: number;
  afterMs?: number;
  deadlineMs?: number;
}

/** `exitedProcesses` counts the processes other than the one stopped. */
export interface SigtermDrainFigures extends TrafficFigures {
  /** Requests sent and then lost: connection reset or closed under them, or no answer within 15 s. */
  lost: number;
  /** Connections refused by the stopping process (then sent to the other one): expected. */
  refused: number;
  /** How long the stopped process took to exit, and its exit code. */
  drainMs: number;
  exitCode: number | null;
  stopped: 'web' | 'all';
}

export function describeSigtermDrain(f: SigtermDrainFigures): string {
  return (
    `${describeTraffic(f)} · lost (reset or unanswered) ${f.lost} · refused then retried elsewhere ${f.refused} · ` +
    `stopped process (${f.stopped === 'all' ? 'every role, as npm start' : 'web'}) exited in ${seconds(f.drainMs)} with code ${f.exitCode} · other processes exited ${f.exitedProcesses}`
  );
}

export async function runSigtermDrain(options: SigtermDrainOptions): Promise<SigtermDrainFigures> {
  const { clients = 8, beforeMs = 5_000, afterMs = 5_000, deadlineMs = 60_000, stopped = 'web' } = options;
  const redis = await startOwnRedis();
  const env = roleEnv(options.databaseUrl, redis.url);
  const processes: RoleProcess[] = [];
  const destination = await startDestination();
  try {
    processes.push(
      ...(await Promise.all([startRole(stopped, env), startRole('web', env), startRole('events', env), startRole('webhooks', env)])),
    );
    const [stopping, remaining] = processes;
    const tenant = await createChaosTenant();
    await routeBookingsTo(remaining.url!, tenant, destination.url);

    const tally = new Tally();
    let refused = 0;
    let stop = false;
    let next = 0;
    // Keep-alive clients (fetch keeps connections open): writes and reads, mostly to the process to be stopped.
    const client = async (i: number) => {
      let target = stopping.url!;
      while (!stop) {
        const write = i % 2 === 0;
        const call = () =>
          write
            ? callApi(target, tenant.key, 'POST', '/reservations', bookingBody(tenant.venueId, next++))
            : callApi(target, tenant.key, 'GET', `/reservations?venueId=${tenant.venueId}&limit=10`);
        let answer = await call();
        if (answer.status === 'refused' && target !== remaining.url) {
          refused++;
          target = remaining.url!;
          answer = await call();
        }
        tally.add(answer);
      }
    };
    const running = Array.from({ length: clients }, (_, i) => client(i));
    await sleep(beforeMs);
    const signalledAt = Date.now();
    const exited = endProcess(stopping.child, 'SIGTERM', 60_000).then(() => Date.now() - signalledAt);
    await sleep(afterMs);
    stop = true;
    await Promise.all(running);
    const drainMs = await exited;

    const webhooks = await awaitWebhooks(destination, tenant.venueId, Date.now() + deadlineMs);
    return {
      ...trafficFigures(tally, destination, webhooks, processes.slice(1)),
      lost: tally.count((s) => s === 'reset' || s === 'timeout'),
      refused,
      drainMs,
      exitCode: stopping.child.exitCode,
      stopped,
    };
  } finally {
    await Promise.all(processes.map((p) => endProcess(p.child, 'SIGTERM')));
    await destination.close();
    await redis.stop();
  }
}
