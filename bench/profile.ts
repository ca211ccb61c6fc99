// Where a benchmark's CPU goes: runs `bench/<name>.ts` with each of its server and worker processes
// profiled and prints each process role's CPU per package and per project folder.
// - By default under Node's --cpu-prof: the profiles are kept under profiles/<name>-<time>/<role>/
//   (open one in Chrome DevTools), and the figures are self time (start-up included: compare runs of
//   the same length). V8's sampler counts wall time: on busy cores a thread descheduled after a socket
//   write shows as time in `writeBuffer`.
// - With --perf: the whole machine under `perf record -g` (on-CPU samples only, the kernel's work for
//   each process included), the Node processes with --perf-basic-prof; every process is reported,
//   PostgreSQL's and Redis's too (bench/support/perf-summary.ts). Needs Linux's perf (Debian: linux-perf).
// - With --heap: what each process allocates, sampled by V8's heap profiler with the freed objects
//   kept (bench/support/sample-allocations.ts), per package and project folder of the allocating
//   function: what makes garbage collection run.
// Usage: npm run profile -- [--perf | --heap] <bench> [the benchmark's own arguments]   e.g. npm run profile -- --perf reservations 10 40
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { mergeCpuSummaries, summariseCpuProfile, type CpuProfile, type CpuSummary } from './support/cpu-profile-summary.js';
import { mergeAllocationSummaries, summariseHeapProfile, type HeapProfile } from './support/heap-profile-summary.js';
import { summarisePerfScript } from './support/perf-summary.js';

const mode = process.argv[2] === '--perf' || process.argv[2] === '--heap' ? process.argv[2] : null;
const perf = mode === '--perf';
const [name, ...args] = process.argv.slice(mode ? 3 : 2);
if (!name || !existsSync(path.resolve('bench', `${name}.ts`))) {
  console.error('usage: npm run profile -- [--perf | --heap] <bench> [arguments], <bench> one of bench/*.ts (reservations, webhooks…)');
  process.exit(2);
}
if (perf && spawnSync('perf', ['--version']).status !== 0) {
  console.error('perf not found: install it (Debian: apt-get install linux-perf), or profile without --perf');
  process.exit(2);
}
const dir = path.resolve('profiles', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
const root = path.resolve('.');

/** Samples per second and CPU of perf's recording: enough for shares of a few tenths of a percent over a benchmark's minute. */
const perfFrequency = 299;

function print(label: string, summary: CpuSummary): void {
  console.log(
    `\n${label}, busy ${(summary.busyMs / 1000).toFixed(1)} s${summary.idleMs ? `, idle ${(summary.idleMs / 1000).toFixed(1)} s` : ''}`,
  );
  for (const g of summary.groups.filter((g) => g.percent >= 0.5)) {
    console.log(`  ${g.percent.toFixed(1).padStart(5)} %  ${(g.ms / 1000).toFixed(2).padStart(7)} s  ${g.group}`);
  }
}

/** The profiles each role's processes wrote under `dir` (files ending in `extension`), summarised together per role. */
function readRoleProfiles<S>(
  extension: string,
  summarise: (profile: unknown) => S,
  merge: (summaries: S[]) => S,
): Array<{ role: string; processes: number; summary: S }> {
  const roles = existsSync(dir) ? readdirSync(dir) : [];
  if (!roles.length) console.log(`\nno profile written: bench/${name}.ts starts no process through bench/support's profileFlags`);
  return roles.sort().map((role) => {
    const files = readdirSync(path.join(dir, role)).filter((f) => f.endsWith(extension));
    const summaries = files.map((f) => summarise(JSON.parse(readFileSync(path.join(dir, role, f), 'utf8'))));
    return { role, processes: files.length, summary: merge(summaries) };
  });
}

function runBench(env: Record<string, string>): number {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join('bench', `${name}.ts`), ...args], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return run.status ?? 1;
}

if (perf) {
  mkdirSync(dir, { recursive: true });
  const data = path.join(dir, 'perf.data');
  const recorder = spawn('perf', ['record', '-a', '-g', '-F', String(perfFrequency), '-o', data], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const recorded = once(recorder, 'exit');
  process.exitCode = runBench({ BENCH_PERF_PROFILE: '1' });
  recorder.kill('SIGINT');
  await recorded;
  const script = spawnSync('perf', ['script', '-i', data, '-F', 'comm,pid,tid,ip,sym,dso'], {
    encoding: 'utf8',
    maxBuffer: 2 ** 31 - 1,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const roles = summarisePerfScript(script.stdout, root, 1000 / perfFrequency);
  const total = roles.reduce((a, r) => a + r.busyMs, 0);
  for (const role of roles.filter((r) => r.busyMs >= total / 100)) {
    print(`${role.role}: ${role.processes} process(es), ${((role.busyMs * 100) / total).toFixed(1)} % of the machine's samples`, role);
  }
  console.log(`\nsamples: ${path.relative(root, data)} (perf report -i …; the JavaScript symbols are in /tmp/perf-<pid>.map)`);
} else if (mode === '--heap') {
  process.exitCode = runBench({ BENCH_HEAP_PROF_DIR: dir });
  const roles = readRoleProfiles('.heapprofile', (p) => summariseHeapProfile(p as HeapProfile, root), mergeAllocationSummaries);
  for (const { role, processes, summary } of roles) {
    console.log(`\n${role}: ${processes} process(es), ${(summary.bytes / 1e6).toFixed(0)} MB allocated (sampled, start-up included)`);
    for (const g of summary.groups.filter((g) => g.percent >= 0.5)) {
      console.log(`  ${g.percent.toFixed(1).padStart(5)} %  ${(g.bytes / 1e6).toFixed(1).padStart(8)} MB  ${g.group}`);
    }
  }
  console.log(`\nprofiles: ${path.relative(root, dir)} (open a .heapprofile in Chrome DevTools' Memory panel)`);
} else {
  process.exitCode = runBench({ BENCH_CPU_PROF_DIR: dir });
  const roles = readRoleProfiles('.cpuprofile', (p) => summariseCpuProfile(p as CpuProfile, root), mergeCpuSummaries);
  for (const { role, processes, summary } of roles) print(`${role}: ${processes} process(es)`, summary);
  console.log(`\nprofiles: ${path.relative(root, dir)} (open a .cpuprofile in Chrome DevTools' Performance panel)`);
}
