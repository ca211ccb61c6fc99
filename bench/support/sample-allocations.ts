// Loaded with `--import` into a benchmark's child process while `npm run profile -- --heap` runs it
// (BENCH_HEAP_PROF_DIR set; bench/support/profiling.ts): samples the process's allocations with
// V8's sampling heap profiler from start to exit, the objects already freed included (Node's own
// --heap-prof keeps only what is still alive at exit), and writes the profile as it exits, into
// <BENCH_HEAP_PROF_DIR>/<its title>/<pid>.heapprofile. Benchmark tooling: it acts as it is loaded.
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import path from 'node:path';

const dir = process.env.BENCH_HEAP_PROF_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  session.post('HeapProfiler.enable');
  // One sample per 32 KiB allocated on average: a few thousand a second under load, a small cost.
  session.post('HeapProfiler.startSampling', {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  // A session of the process's own thread answers before post returns: the profile is written
  // within the exit handler, which can do nothing asynchronous.
  process.once('exit', () => {
    session.post('HeapProfiler.stopSampling', (err, result) => {
      if (err) return;
      const folder = path.join(dir, process.title);
      mkdirSync(folder, { recursive: true });
      writeFileSync(path.join(folder, `${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
