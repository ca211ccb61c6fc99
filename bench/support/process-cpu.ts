import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

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

/** CPU milliseconds used by each of these processes so far. */
export function cpuSnapshot(pids: Iterable<number>): Map<number, number> {
  return new Map([...pids].map((pid) => [pid, processCpuMs(pid)]));
}

/** CPU milliseconds used since `before` by the processes of `after` (one that started since counts from 0). */
export function cpuUsedSince(before: Map<number, number>, after: Map<number, number>): number {
  let sum = 0;
  for (const [pid, ms] of after) sum += ms - (before.get(pid) ?? 0);
  return sum;
}
