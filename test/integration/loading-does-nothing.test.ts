import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** Every module of src/ but the entry points (which parse the environment and start the process). */
async function libraryModules(): Promise<string[]> {
  const entryPoints = new Set(['src/main.ts', 'src/server.ts', 'src/cli/main.ts']);
  const files = (await readdir('src', { recursive: true })).map((f) => path.join('src', f));
  return files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !entryPoints.has(f)).sort();
}

describe('loading a module does nothing (docs/architecture.md "Composition root")', () => {
  it('every module of src/ loads with an environment no configuration can be parsed from, and leaves nothing running (its main thread woken fewer than 20 times in the second after)', async () => {
    const modules = await libraryModules();
    expect(modules.length).toBeGreaterThan(100);
    // Then a second of nothing: a timer that does not keep the process alive (unref'd, or libuv's own,
    // as prom-client's event-loop monitor was) still wakes its main thread.
    const program = [
      ...modules.map((m) => `await import(${JSON.stringify(`./${m}`)});`),
      "const { mainThreadWakeUps } = await import('./test/support/wake-ups.ts');",
      'const before = mainThreadWakeUps(process.pid);',
      'await new Promise((resolve) => setTimeout(resolve, 1000));',
      'console.log(`loaded, woken ${mainThreadWakeUps(process.pid) - before} times in a second`);',
    ].join('\n');
    // No database, Redis or queue is created, no configuration parsed, no timer started: the process,
    // its modules loaded, has nothing left to do and ends by itself, with a code of 0.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      env: { PATH: process.env.PATH, DATABASE_URL: 'not a url', REDIS_URL: 'neither', LOG_LEVEL: 'nonsense' },
      timeout: 120_000,
    });
    expect(stdout.trim()).toMatch(/^loaded, woken \d+ times in a second$/);
    expect(Number(/\d+/.exec(stdout)![0])).toBeLessThan(20);
  });

  it("the process configuration is the entry point's: asked for before it is set, it throws, even where the environment parses", async () => {
    const program = [
      "const { parseConfig, processConfig, useProcessConfig } = await import('./src/config.ts');",
      "try { processConfig(); console.log('parsed the environment'); } catch (err) { console.log(`refused: ${err.message}`); }",
      'useProcessConfig(parseConfig(process.env));',
      'console.log(`set: ${processConfig().QUEUE_PREFIX}`);',
    ].join('\n');
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      env: { ...process.env, QUEUE_PREFIX: 'given-by-the-entry-point' },
      timeout: 60_000,
    });
    expect(stdout.trim().split('\n')).toEqual([
      'refused: the process configuration is not set: the entry point calls useProcessConfig (setUpProcess) first',
      'set: given-by-the-entry-point',
    ]);
  });
});
