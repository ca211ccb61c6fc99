import path from 'node:path';

/**
 * Node's flags that profile a benchmark's child process while `npm run profile` runs the benchmark
 * (BENCH_CPU_PROF_DIR set): its V8 CPU profile is written, when it exits, into a folder named by
 * `label` (the role: web, worker-events…). Empty otherwise. Flags, not NODE_OPTIONS, which does not
 * accept --cpu-prof.
 */
export function profileFlags(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, label)}`] : [];
}
