// What the topology runs share (npm run topologies, npm run topologies:postgres): the platform's
// roles as separate processes, none restarted by hand, and the load they are put under.
import { callApi, roleEnv, sleep, type ChaosTenant, type Tally } from '../chaos/chaos-world.js';
import { startRole, type RoleProcess } from '../chaos/own-processes.js';

/**
 * web, worker-events and worker-webhooks, each its own process, on `databaseUrl` with `settings`
 * over the scenarios' environment (roleEnv). Without REDIS_URL in `settings` (Sentinel, Cluster)
 * none is passed on, this process's included: a process takes one Redis mode only.
 */
export async function startRoles(databaseUrl: string, settings: Record<string, string>): Promise<RoleProcess[]> {
  const { REDIS_URL: _, ...env } = { ...roleEnv(databaseUrl, ''), ...settings };
  if (settings.REDIS_URL) env.REDIS_URL = settings.REDIS_URL;
  else delete process.env.REDIS_URL;
  const web = await startRole('web', env);
  return [web, await startRole('events', env), await startRole('webhooks', env)];
}

/**
 * Reads that tolerate lag (a 31-day summary report and a GET /events page of the venue), one after
 * the other until `until()` says stop; every answer goes to the tally.
 */
export async function readSteadily(baseUrl: string, tenant: ChaosTenant, until: () => boolean, tally: Tally): Promise<void> {
  const day = (n: number) => new Date(Date.now() + n * 24 * 3600_000).toISOString().slice(0, 10);
  while (!until()) {
    tally.add(await callApi(baseUrl, tenant.key, 'GET', `/reports/summary?venueId=${tenant.venueId}&from=${day(2)}&to=${day(32)}`));
    tally.add(await callApi(baseUrl, tenant.key, 'GET', `/events?venueId=${tenant.venueId}`));
    await sleep(100);
  }
}
