/**
 * Which Redis a deployment uses (docs/operations.md "Running on several machines"): one server
 * (REDIS_URL), a master followed through Sentinel (REDIS_SENTINELS + REDIS_SENTINEL_MASTER), or a
 * Redis Cluster (REDIS_CLUSTER_NODES). Pure: read from configuration values, never from the environment.
 */

export interface HostPort {
  host: string;
  port: number;
}

export type RedisTopology =
  | { mode: 'single'; url: string }
  | { mode: 'sentinel'; sentinels: HostPort[]; masterName: string; sentinelPassword?: string; password?: string }
  | { mode: 'cluster'; nodes: HostPort[]; password?: string };

/** The configuration values the topology is read from (src/config.ts). */
export interface RedisSettings {
  REDIS_URL?: string;
  REDIS_SENTINELS?: string;
  REDIS_SENTINEL_MASTER?: string;
  REDIS_SENTINEL_PASSWORD?: string;
  REDIS_CLUSTER_NODES?: string;
  REDIS_PASSWORD?: string;
}

/** The server of a deployment that sets no Redis variable at all. */
export const defaultRedisUrl = 'redis://127.0.0.1:6379';

/** The variables that each choose a mode: a deployment sets at most one of them. */
export const redisModeVariables = ['REDIS_URL', 'REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const;

/** `host:port,host:port` → addresses; null when an entry is not `host:port` with a port in range. */
export function parseHostPorts(list: string): HostPort[] | null {
  const entries = list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (!entries.length) return null;
  const parsed: HostPort[] = [];
  for (const entry of entries) {
    // The last colon separates the port: `[::1]:26379` keeps its brackets off the host.
    const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) return null;
    parsed.push({ host: match[1], port });
  }
  return parsed;
}

/** The mode variables that are set (non-empty): more than one is a configuration error. */
export function redisModesSet(settings: RedisSettings): string[] {
  return redisModeVariables.filter((name) => Boolean(settings[name]));
}

/** The topology of validated settings (src/config.ts checks them first: one mode, well-formed lists). */
export function redisTopologyOf(settings: RedisSettings): RedisTopology {
  if (settings.REDIS_SENTINELS) {
    return {
      mode: 'sentinel',
      sentinels: parseHostPorts(settings.REDIS_SENTINELS) ?? [],
      masterName: settings.REDIS_SENTINEL_MASTER ?? '',
      sentinelPassword: settings.REDIS_SENTINEL_PASSWORD,
      password: settings.REDIS_PASSWORD,
    };
  }
  if (settings.REDIS_CLUSTER_NODES)
    return { mode: 'cluster', nodes: parseHostPorts(settings.REDIS_CLUSTER_NODES) ?? [], password: settings.REDIS_PASSWORD };
  return { mode: 'single', url: settings.REDIS_URL ?? defaultRedisUrl };
}

/** Where a topology is reached, for log lines and start-up messages (no password). */
export function describeTopology(topology: RedisTopology): string {
  const list = (nodes: HostPort[]) => nodes.map(({ host, port }) => `${host}:${port}`).join(',');
  if (topology.mode === 'sentinel') return `Redis master "${topology.masterName}" through Sentinel ${list(topology.sentinels)}`;
  if (topology.mode === 'cluster') return `Redis Cluster ${list(topology.nodes)}`;
  return `Redis (${topology.url.replace(/\/\/[^@]*@/, '//')})`;
}

/** What is wrong with the Redis settings, one entry per variable at fault (src/config.ts reports them at start-up). */
export function redisSettingsProblems(settings: RedisSettings): Array<{ variable: keyof RedisSettings; message: string }> {
  const problems: Array<{ variable: keyof RedisSettings; message: string }> = [];
  const modes = redisModesSet(settings);
  if (modes.length > 1) {
    problems.push({ variable: modes[1] as keyof RedisSettings, message: `${modes.join(' and ')} are both set: choose one Redis mode` });
  }
  for (const variable of ['REDIS_SENTINELS', 'REDIS_CLUSTER_NODES'] as const) {
    const value = settings[variable];
    if (value && !parseHostPorts(value)) problems.push({ variable, message: 'must be a comma-separated list of host:port' });
  }
  if (settings.REDIS_SENTINELS && !settings.REDIS_SENTINEL_MASTER) {
    problems.push({
      variable: 'REDIS_SENTINEL_MASTER',
      message: 'is required with REDIS_SENTINELS (the name Sentinel knows the master by)',
    });
  }
  if (!settings.REDIS_SENTINELS && (settings.REDIS_SENTINEL_MASTER || settings.REDIS_SENTINEL_PASSWORD)) {
    const variable = settings.REDIS_SENTINEL_MASTER ? 'REDIS_SENTINEL_MASTER' : 'REDIS_SENTINEL_PASSWORD';
    problems.push({ variable, message: 'is only used with REDIS_SENTINELS' });
  }
  return problems;
}
