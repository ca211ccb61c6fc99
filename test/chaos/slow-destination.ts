// Scenario: two destinations of one venue, one answering at once and one taking 12 s (past the
// 10 s limit). The healthy destination's lag (event commit → webhook received) is measured alone,
// then beside the slow one: per-destination isolation (docs/webhooks.md "Isolation per destination") keeps it within 2×.
import {
  awaitWebhooks,
  bookSteadily,
  callApi,
  createChaosTenant,
  describeTraffic,
  percentile,
  roleEnv,
  routeBookingsTo,
  seconds,
  startDestination,
  Tally,
  trafficFigures,
  type TrafficFigures,
} from './chaos-world.js';
import { endProcess, startOwnRedis, startRole, type RoleProcess } from './own-processes.js';

export interface SlowDestinationOptions {
  databaseUrl: string;
  /** Bookings of each phase (alone, then beside the slow destination), at `bookingsPerSecond`. */
  bookings?: number;
  bookingsPerSecond?: number;
  slowAnswerMs?: number;
  deadlineMs?: number;
}

/** The deliveries counted are the healthy destination's. */
export interface SlowDestinationFigures extends TrafficFigures {
  /** The healthy destination's lag percentiles alone and beside the slow one (ms). */
  aloneP50: number;
  aloneP99: number;
  besideP50: number;
  besideP99: number;
  /** Requests the slow destination received (each held 12 s, given up by the sender after 10 s). */
  slowReceived: number;
}

export function describeSlowDestination(f: SlowDestinationFigures): string {
  const ms = (v: number) => seconds(v);
  return (
    `${describeTraffic(f)} (healthy destination) · healthy lag alone p50 ${ms(f.aloneP50)} / p99 ${ms(f.aloneP99)}, beside a 12 s destination p50 ${ms(f.besideP50)} / p99 ${ms(f.besideP99)} ` +
    `(p99 ×${(f.besideP99 / f.aloneP99).toFixed(2)}) · slow destination received ${f.slowReceived} · processes exited ${f.exitedProcesses}`
  );
}

export async function runSlowDestination(options: SlowDestinationOptions): Promise<SlowDestinationFigures> {
  const { bookings = 150, bookingsPerSecond = 10, slowAnswerMs = 12_000, deadlineMs = 120_000 } = options;
  const redis = await startOwnRedis();
  const env = roleEnv(options.databaseUrl, redis.url);
  const processes: RoleProcess[] = [];
  const healthy = await startDestination();
  const slow = await startDestination(slowAnswerMs);
  try {
    processes.push(...(await Promise.all([startRole('web', env), startRole('events', env), startRole('webhooks', env)])));
    const web = processes[0].url!;
    const tenant = await createChaosTenant();
    await routeBookingsTo(web, tenant, healthy.url);
    const tally = new Tally();
    const deadline = Date.now() + deadlineMs;

    // Phase 1: the healthy destination alone.
    let n = 0;
    let booked = 0;
    n = await bookSteadily(web, tenant, bookingsPerSecond, () => booked++ >= bookings, tally, n);
    const { committed: alone } = await awaitWebhooks(healthy, tenant.venueId, deadline);

    // Phase 2: the same venue also sends every booking to a destination that answers after 12 s.
    const { automationId: slowAutomation } = await routeBookingsTo(web, tenant, slow.url);
    booked = 0;
    await bookSteadily(web, tenant, bookingsPerSecond, () => booked++ >= bookings, tally, n);
    const webhooks = await awaitWebhooks(healthy, tenant.venueId, deadline);
    const all = webhooks.committed;
    const aloneSet = new Set(alone);
    const beside = all.filter((id) => !aloneSet.has(id));
    // The slow destination's retries are not the subject: deactivating discards them.
    await callApi(web, tenant.key, 'PATCH', `/automations/${slowAutomation}`, { status: 'inactive' });

    const lagOf = (ids: string[]) => {
      const wanted = new Set(ids);
      return healthy.received.filter((d) => wanted.has(d.eventId)).map((d) => d.lagMs);
    };
    return {
      ...trafficFigures(tally, healthy, webhooks, processes),
      aloneP50: percentile(lagOf(alone), 50),
      aloneP99: percentile(lagOf(alone), 99),
      besideP50: percentile(lagOf(beside), 50),
      besideP99: percentile(lagOf(beside), 99),
      slowReceived: slow.received.length,
    };
  } finally {
    await Promise.all([healthy.close(), slow.close()]);
    await Promise.all(processes.map((p) => endProcess(p.child, 'SIGTERM')));
    await redis.stop();
  }
}
