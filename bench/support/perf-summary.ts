import { groupOfFrame, type CpuSummary } from './cpu-profile-summary.js';

/**
 * Where the processes' CPU went, from `perf record -g` samples (`perf script -F comm,pid,tid,ip,sym,dso`
 * output): on-CPU samples only, the kernel's work for a process (its socket writes and reads)
 * included. Node's processes run with `--perf-basic-prof` and `--interpreted-frames-native-stack`,
 * so their JavaScript frames are named (`JS:*name file:///…:line:col`), and `--title=<role>`, so
 * that their main thread's name is their role. A sample counts toward the group of its innermost
 * JavaScript frame (the builtins and inline caches it ran included). Node's own binary keeps no frame
 * pointers, so a sample in its C++ (the V8 runtime, bindings, libc, a system call's kernel side)
 * seldom reaches a JavaScript caller: those count as garbage collection, the JIT compiler, the
 * kernel or C++ by their innermost frames. V8's own `--cpu-prof` counts wall time instead: a thread
 * descheduled right after a socket write shows as time in `writeBuffer` (docs/benchmarks.md "The
 * venue day's stamps and the event's enqueue").
 */
export interface PerfRoleSummary extends CpuSummary {
  role: string;
  processes: number;
}

const gcSymbol = /Scaveng|MarkCompact|ConcurrentMarking|Sweeper|MinorMC|Heap::CollectGarbage|Evacuat/;
const compilerSymbol = /v8::internal::(compiler|maglev|baseline)::|OptimizingCompileDispatcher|Compiler::Compile/;

/** The group of one sample's stack, innermost frame first: [symbol, dso] pairs. */
export function groupOfStack(frames: ReadonlyArray<readonly [symbol: string, dso: string]>, root: string): string {
  for (const [symbol] of frames) {
    const js = /^JS:[*~^]?(\S*)\s+(\S+)$/.exec(symbol);
    if (js) return groupOfFrame(js[1], js[2].replace(/:\d+:\d+$/, ''), root);
    if (gcSymbol.test(symbol)) return 'garbage collection';
    if (compilerSymbol.test(symbol)) return 'JIT compiler';
  }
  if (frames[0]?.[1].includes('kernel')) return 'kernel';
  return 'C++ and libc (caller not unwound)';
}

/**
 * The samples of `perf script` output per role: a process's role is its main thread's name (its
 * `--title`, else the program's: postgres, redis-server); each sample is `sampleMs` of CPU.
 */
export function summarisePerfScript(text: string, root: string, sampleMs: number): PerfRoleSummary[] {
  const roleOfPid = new Map<number, string>();
  const countsOfPid = new Map<number, Map<string, number>>();
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split('\n').filter((line) => line.trim());
    const header = /^(.*?)\s+(\d+)\/(\d+)\s*$/.exec(lines[0] ?? '');
    if (!header) continue;
    const [, comm, pidText, tidText] = header;
    const pid = Number(pidText);
    if (pid === Number(tidText) || !roleOfPid.has(pid)) roleOfPid.set(pid, comm.trim());
    const frames = lines.slice(1).flatMap((line): Array<[string, string]> => {
      const frame = /^\s*[0-9a-f]+\s+(.*?)\s+\(([^()]*)\)\s*$/.exec(line);
      return frame ? [[frame[1], frame[2]]] : [];
    });
    const group = groupOfStack(frames, root);
    const counts = countsOfPid.get(pid) ?? new Map<string, number>();
    counts.set(group, (counts.get(group) ?? 0) + 1);
    countsOfPid.set(pid, counts);
  }
  const byRole = new Map<string, { processes: number; counts: Map<string, number> }>();
  for (const [pid, counts] of countsOfPid) {
    const role = roleOfPid.get(pid)!;
    const entry = byRole.get(role) ?? { processes: 0, counts: new Map<string, number>() };
    entry.processes++;
    for (const [group, n] of counts) entry.counts.set(group, (entry.counts.get(group) ?? 0) + n);
    byRole.set(role, entry);
  }
  return [...byRole]
    .map(([role, { processes, counts }]) => {
      const busyMs = [...counts.values()].reduce((a, b) => a + b, 0) * sampleMs;
      const groups = [...counts]
        .map(([group, n]) => ({ group, ms: n * sampleMs, percent: (n * sampleMs * 100) / busyMs }))
        .sort((a, b) => b.ms - a.ms);
      return { role, processes, busyMs, idleMs: 0, groups };
    })
    .sort((a, b) => b.busyMs - a.busyMs);
}
