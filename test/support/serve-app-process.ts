import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.js';

export interface ServeAppProcess {
  child: ChildProcess;
  url: string;
  /** SIGKILL, unless it has already exited. */
  kill: () => void;
}

/**
 * test/support/serve-app.ts in a process of its own, on a port free at start (a random port could be
 * another file's), resolved once it listens. An exit the test did not ask for is written to stderr,
 * so that a request refused later names its cause.
 */
export async function spawnServeApp(env: Record<string, string> = {}): Promise<ServeAppProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/serve-app.ts'], {
    env: { ...process.env, ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let killed = false;
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code, signal) => {
      const message = `serve-app on port ${port} (pid ${child.pid}) exited: code ${code}, signal ${signal}`;
      if (!killed) process.stderr.write(`${message}\n`);
      reject(new Error(message));
    }),
  );
  exited.catch(() => {});
  await Promise.race([new Promise((resolve) => child.stdout!.once('data', resolve)), exited]);
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    kill: () => {
      killed = true;
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}
