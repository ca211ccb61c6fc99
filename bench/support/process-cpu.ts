import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Sql } from 'postgres';

const clockTicksPerSecond = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU milliseconds (user + system) a process has used so far, from /proc (Linux); 0 once it has exited. */
export function processCpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
  } catch {
    return 0;
  }
}

/**
 * CPU milliseconds used so far by each PostgreSQL backend of the database `sql` is connected to (its
 * own session included).
 */
export async function postgresCpuSnapshot(sql: Sql): Promise<Map<number, number>> {
  const backends = await sql<Array<{ pid: number }>>`select pid from pg_stat_activity where datname = current_database()`;
  return new Map(backends.map(({ pid }) => [pid, processCpuMs(pid)]));
}

/** CPU milliseconds used since `before` by the backends of `after` (one that started since counts from 0). */
export function cpuUsedSince(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}

/**
 * CPU milliseconds the Redis server `redis` is connected to has used so far (INFO cpu): all of it,
 * other users of the same server included, so on a shared machine an upper bound.
 */
export async function redisCpuMs(redis: { info(section: 'cpu'): Promise<string> }): Promise<number> {
  const info = await redis.info('cpu');
  const seconds = ['used_cpu_user', 'used_cpu_sys'].reduce(
    (sum, field) => sum + Number(new RegExp(`^${field}:([0-9.]+)`, 'm').exec(info)?.[1] ?? 0),
    0,
  );
  return seconds * 1000;
}
