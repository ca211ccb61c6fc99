import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { archiveAutomations } from '../support/webhook-fixtures.js';
import { freePort } from '../support/free-port.js';
import { compiledEntry } from '../support/entry-process.js';

const root = path.resolve(import.meta.dirname, '../..');

/**
 * The shell blocks of docs/quickstart.md (fenced `sh`, in page order; `sh server` blocks start the
 * platform and are done here by the test), run as one bash script against a real platform: every
 * role in one process, as `npm start` runs them. A step that answers an HTTP error stops the script
 * (`curl -f`, `set -e`), so the page cannot drift from the API.
 */
function pageScript(): string {
  const page = readFileSync(path.join(root, 'docs/quickstart.md'), 'utf8');
  const blocks = [...page.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  return ['set -euo pipefail', ...blocks].join('\n');
}

let platform: ChildProcess;
let port: number;

beforeAll(async () => {
  port = await freePort();
  platform = spawn(process.execPath, [compiledEntry('src/main.ts')], {
    cwd: root,
    env: { ...process.env, PORT: String(port), METRICS_PORT: '0', LOG_LEVEL: 'warn', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await eventually(
    () =>
      fetch(`http://127.0.0.1:${port}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    40_000,
    'the platform to start',
  );
}, 60_000);

afterAll(async () => {
  if (platform.exitCode === null) {
    platform.kill('SIGTERM');
    await once(platform, 'exit');
  }
});

describe('docs/quickstart.md, run as written', () => {
  it('has the steps of the walkthrough', () => {
    const script = pageScript();
    for (const step of [
      '/availability?',
      '/webhook-endpoints',
      '/automations',
      '/availability/holds',
      'holdId',
      'If-Match',
      'verified reservation_confirmed',
      '-X DELETE',
    ]) {
      expect(script).toContain(step);
    }
  });

  it('goes from availability to a verified webhook and a cancellation', { timeout: 120_000 }, async () => {
    const receiverPort = await freePort();
    // Its own process group, so that the receiver it starts in the background ends with it.
    const bash = spawn('bash', ['-c', pageScript()], {
      cwd: root,
      env: { ...process.env, PORT: String(port), RECEIVER_PORT: String(receiverPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    bash.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    bash.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const [code] = (await once(bash, 'exit')) as [number | null];
    try {
      process.kill(-bash.pid!, 'SIGTERM');
    } catch {
      // the group is gone already
    }
    expect(code, output).toBe(0);
    expect(output).toMatch(/"available":true/);
    expect(output).toMatch(/"status":"created"/);
    expect(output).toMatch(/"status":"confirmed"/);
    expect(output).toMatch(/^verified reservation_confirmed [0-9a-f-]{36} confirmed$/m);
    expect(output).toMatch(/^cancelled$/m);
    // The page stops its receiver before the cancellation's webhook can arrive, so that delivery waits
    // for a retry that no process of the run will make once this file's platform stops: the
    // automation is archived as an operator would, which annuls it (the check after the suite would
    // count it overdue otherwise).
    const automationIds = [...output.matchAll(/"automation":\{"id":"([0-9a-f-]{36})"/g)].map((m) => m[1]);
    expect(automationIds).toHaveLength(1);
    await archiveAutomations(`http://127.0.0.1:${port}`, automationIds);
  });
});
