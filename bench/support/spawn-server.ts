import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { profileFlags } from './profiling.js';

/**
 * Starts a server script in its own process (so that the load generator does not share its event loop) and waits for the port.
 * A `.ts` script runs through tsx; a `.js` one (a compiled build, dist/, as `npm start` runs it) by Node alone.
 * `nodeOptions`: Node's own flags, e.g. `--cpu-prof` (not accepted in NODE_OPTIONS); under `npm run
 * profile` the process is profiled as the role its script names (web for src/server.ts).
 */
export async function spawnServer(
  script: string,
  env: Record<string, string>,
  port: number,
  nodeOptions: string[] = profileFlags(roleOf(script)),
): Promise<ChildProcess> {
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeOptions, ...loader, script], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  // Up to 60 s: tsx takes several seconds to start on a loaded machine.
  for (let i = 0; i < 600; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (res.ok) return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`${script} did not start on port ${port}`);
}

/** The role a server script runs: web for server.ts or server.js, else the script's name. */
function roleOf(script: string): string {
  const name = path.basename(script).replace(/\.[jt]s$/, '');
  return name === 'server' ? 'web' : name;
}
