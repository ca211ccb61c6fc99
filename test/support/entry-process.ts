import type { ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * The compiled form (dist/, built by the global setup when a source is newer) of an entry point of
 * src/ or workers/, for a test that runs it as a process of its own, as production does: it starts
 * in a fraction of the time tsx takes, which compiles its whole import graph at each start.
 */
export function compiledEntry(source: string): string {
  if (!/^(src|workers)\/.*\.ts$/.test(source)) throw new Error(`${source} is not an entry point of src/ or workers/`);
  return path.join('dist', source.replace(/\.ts$/, '.js'));
}

/** SIGKILL to a process the test started, resolved once it has exited (at once if it already had). */
export function killProcess(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    if (!child.kill('SIGKILL')) resolve();
  });
}
