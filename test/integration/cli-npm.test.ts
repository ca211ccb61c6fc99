import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

// npm and tsx start a process that compiles the CLI (seconds on a busy machine): the timeout guards hangs only.
describe('npm run cli', { timeout: 120_000 }, () => {
  it('`npm run cli -- demo --json` prints exactly one JSON object on stdout, as README.md "Command line" says', async () => {
    const { stdout } = await promisify(execFile)('npm', ['run', 'cli', '--', 'demo', '--json'], { env: process.env });
    const demo = JSON.parse(stdout);
    expect(Object.keys(demo).sort()).toEqual(['keys', 'organisationId', 'venueId']);
    expect(Object.keys(demo.keys).sort()).toEqual(['live', 'publishable', 'test']);
  });
});
