// Where a benchmark's CPU goes: runs `bench/<name>.ts` with each of its server and worker processes
// under Node's --cpu-prof, keeps the profiles under profiles/<name>-<time>/<role>/, and prints the
// self time of each process role per package and per project folder (start-up included: compare
// runs of the same length).
// Usage: npm run profile -- <bench> [the benchmark's own arguments]   e.g. npm run profile -- reservations 10 40
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { mergeCpuSummaries, summariseCpuProfile, type CpuProfile } from './support/cpu-profile-summary.js';

const [name, ...args] = process.argv.slice(2);
if (!name || !existsSync(path.resolve('bench', `${name}.ts`))) {
  console.error('usage: npm run profile -- <bench> [arguments], <bench> one of bench/*.ts (reservations, webhooks…)');
  process.exit(2);
}
const dir = path.resolve('profiles', `${name}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
const run = spawnSync(process.execPath, ['--import', 'tsx', path.join('bench', `${name}.ts`), ...args], {
  stdio: 'inherit',
  env: { ...process.env, BENCH_CPU_PROF_DIR: dir },
});

const root = path.resolve('.');
const roles = existsSync(dir) ? readdirSync(dir) : [];
if (!roles.length) console.log(`\nno profile written: bench/${name}.ts starts no process through bench/support's profileFlags`);
for (const role of roles.sort()) {
  const files = readdirSync(path.join(dir, role)).filter((f) => f.endsWith('.cpuprofile'));
  const summary = mergeCpuSummaries(
    files.map((f) => summariseCpuProfile(JSON.parse(readFileSync(path.join(dir, role, f), 'utf8')) as CpuProfile, root)),
  );
  console.log(
    `\n${role}: ${files.length} process(es), busy ${(summary.busyMs / 1000).toFixed(1)} s, idle ${(summary.idleMs / 1000).toFixed(1)} s`,
  );
  for (const g of summary.groups.filter((g) => g.percent >= 0.5)) {
    console.log(`  ${g.percent.toFixed(1).padStart(5)} %  ${(g.ms / 1000).toFixed(2).padStart(7)} s  ${g.group}`);
  }
}
console.log(`\nprofiles: ${path.relative(root, dir)} (open a .cpuprofile in Chrome DevTools' Performance panel)`);
process.exitCode = run.status ?? 1;
