// Start-up time (spawn → GET /healthz answers 200) and resident memory of the web role, compiled
// (`node dist/src/server.js`, what Procfile, Dockerfile and compose run) vs. TypeScript through tsx
// (`node --import tsx src/server.ts`). Memory is read right after start-up and after a few seconds of
// authenticated API traffic. Builds dist/ first when it is stale.
// Usage: npx tsx bench/startup.ts [runs=5]
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { median } from './support/statistics.js';

const runs = Number(process.argv[2] ?? 5);
execFileSync(process.execPath, ['scripts/build.mjs', '--if-stale'], { stdio: 'inherit' });
await prepareBenchDatabase('floorline_bench_startup');
const sql = (await import('../src/db/client.js')).pool();
const { venueId, key } = await createBenchTenant();
await sql.end();

const port = 3931;
const env = { ...process.env, ...benchServerEnv('warn'), PORT: String(port) };
const variants = [
  { name: 'compiled (node dist/src/server.js)', args: ['dist/src/server.js'] },
  { name: 'tsx (node --import tsx src/server.ts)', args: ['--import', 'tsx', 'src/server.ts'] },
];

function rssMiB(child: ChildProcess): number {
  // ps works on Linux and macOS; rss is in KiB.
  return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(child.pid)], { encoding: 'utf8' }).trim()) / 1024;
}

async function startTimed(args: string[]): Promise<{ child: ChildProcess; ms: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'ignore', 'inherit'] });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) return { child, ms: performance.now() - started };
    } catch {
      // not listening yet
    }
    if (performance.now() - started > 60_000) {
      child.kill('SIGKILL');
      throw new Error(`${args.join(' ')} did not answer /healthz within 60 s`);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

for (const variant of variants) {
  const times: number[] = [];
  const rssReady: number[] = [];
  const rssLoaded: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { child, ms } = await startTimed(variant.args);
    times.push(ms);
    rssReady.push(rssMiB(child));
    await autocannon({
      url: `http://127.0.0.1:${port}/api/v1/venues/${venueId}`,
      connections: 8,
      duration: 3,
      headers: { authorization: `Bearer ${key}` },
    });
    rssLoaded.push(rssMiB(child));
    await stop(child);
  }
  const f = (x: number) => x.toFixed(0);
  console.log(
    `${variant.name.padEnd(40)} start-up median ${f(median(times))} ms (min ${f(Math.min(...times))}, max ${f(Math.max(...times))})   ` +
      `RSS ready ${f(median(rssReady))} MiB, after 3 s of traffic ${f(median(rssLoaded))} MiB   (${runs} runs)`,
  );
}
