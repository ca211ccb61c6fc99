import { readFileSync } from 'node:fs';

/**
 * How often the main thread of process `pid` has been woken so far: a thread that blocks in the
 * kernel (its event loop waiting for the next timer or socket) and is woken again counts one
 * voluntary context switch in Linux's count for it.
 */
export function mainThreadWakeUps(pid: number): number {
  const status = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
  return Number(/^voluntary_ctxt_switches:\s+(\d+)/m.exec(status)![1]);
}
