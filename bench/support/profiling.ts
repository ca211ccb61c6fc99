import path from 'node:path';

const samplerUrl = new URL('./sample-allocations.ts', import.meta.url).href;

/**
 * Node's flags that profile a benchmark's child process while `npm run profile` runs the benchmark
 * (BENCH_CPU_PROF_DIR set): its V8 CPU profile is written, when it exits, into a folder named by
 * `label` (the role: web, worker-events…). Under `npm run profile -- --perf` (BENCH_PERF_PROFILE
 * set), its JavaScript frames named for `perf` and its main thread named `label`, so that perf's
 * samples tell the roles apart. Under `npm run profile -- --heap` (BENCH_HEAP_PROF_DIR set), its
 * allocations sampled (bench/support/sample-allocations.ts) into a folder named `label`. Empty otherwise. Flags, not NODE_OPTIONS, which does not accept
 * --cpu-prof.
 */
export function profileFlags(label: string): string[] {
  // A thread's name holds 15 characters (worker-webhooks is 15).
  if (process.env.BENCH_PERF_PROFILE) return ['--perf-basic-prof', '--interpreted-frames-native-stack', `--title=${label.slice(0, 15)}`];
  // The sampler is TypeScript: tsx goes first (the caller's own `--import tsx` after it does nothing more).
  if (process.env.BENCH_HEAP_PROF_DIR) return ['--import', 'tsx', '--import', samplerUrl, `--title=${label}`];
  const dir = process.env.BENCH_CPU_PROF_DIR;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, label)}`] : [];
}
