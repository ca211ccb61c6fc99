import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { eventually } from './eventually.js';
import { freePort } from './free-port.js';
import { timedCall } from './timed-call.js';
import { compiledEntry } from './entry-process.js';

const run = promisify(execFile);

/** Every role in one process, as `npm start` runs them (migrations first), on a port of its own. */
export interface OwnApp {
  child: ChildProcess;
  /** `http://127.0.0.1:<port>` and its API base (…/api/v1). */
  origin: string;
  base: string;
  /** Everything the process wrote so far (stdout and stderr). */
  output: () => string;
  /** SIGKILL, unless it has already exited. */
  kill: () => void;
}

/**
 * src/main.ts (compiled) with `env` over this process's environment, resolved once /readyz answers 200 (the
 * migrations applied, every role started). LOG_LEVEL warn, six connections and a rate limit no test
 * reaches unless `env` says otherwise: clients looping on fast 503s during an outage send tens of
 * thousands of requests, and with the default 600/minute the key would still be limited (429) when
 * PostgreSQL is back.
 */
export async function startOwnApp(env: Record<string, string>): Promise<OwnApp> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [compiledEntry('src/main.ts')], {
    env: { ...process.env, LOG_LEVEL: 'warn', DB_POOL_SIZE: '6', RATE_LIMIT_PER_MINUTE: '10000000', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const app: OwnApp = {
    child,
    origin,
    base: `${origin}/api/v1`,
    output: () => output,
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
  await eventually(
    () =>
      fetch(`${origin}/readyz`).then(
        (r) => r.ok,
        () => false,
      ),
    40_000,
    'the app to start',
  ).catch((err: Error) => {
    app.kill();
    throw new Error(`${err.message}: ${output}`);
  });
  return app;
}

/** The demo organisation (`cli demo`) in the database at `databaseUrl`: its venue and keys. */
export async function seedDemo(databaseUrl: string): Promise<{ venueId: string; keys: { live: string; test: string } }> {
  const { stdout } = await run(process.execPath, [compiledEntry('src/cli/main.ts'), 'demo', '--json'], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
  });
  return JSON.parse(stdout) as { venueId: string; keys: { live: string; test: string } };
}

/** A webhook endpoint at `url` and the automation that sends it every reservation_created of the venue; throws unless both are created. */
export async function sendReservationsTo(base: string, key: string, venueId: string, url: string): Promise<void> {
  const automation = { venueId, name: 'Notify', eventTypes: ['reservation_created'], action: { type: 'partner_notification' } };
  for (const [path, body] of [
    ['/webhook-endpoints', { venueId, url }],
    ['/automations', automation],
  ] as const) {
    const res = await timedCall(base, key, 'POST', path, body);
    if (res.status !== 201) throw new Error(`POST ${path} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
}
