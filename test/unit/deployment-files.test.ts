import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const read = (file: string) => readFileSync(file, 'utf8');

describe('deployment files', () => {
  it('docker-compose.yml is valid against the Compose specification schema (dclint, rules in .dclintrc)', async () => {
    // dclint is a development dependency, so `npm ci` brings it: this check runs on every machine.
    const bin = path.join(path.dirname(createRequire(import.meta.url).resolve('dclint/package.json')), 'bin', 'dclint.cjs');
    const run = promisify(execFile)(process.execPath, [
      bin,
      'docker-compose.yml',
      '-c',
      '.dclintrc',
      '--max-warnings',
      '0',
      '--color',
      'false',
    ]);
    await expect(run).resolves.toBeDefined();
  });

  it('Procfile, Dockerfile and compose run compiled entries of files that exist, never tsx or npx', () => {
    for (const file of ['Procfile', 'Dockerfile', 'docker-compose.yml']) {
      const text = read(file);
      expect(text, file).not.toMatch(/\btsx\b|\bnpx\b/);
      const entries = [...text.matchAll(/\bdist\/((?:src|workers)\/[\w/-]+)\.js\b/g)].map((m) => m[1]);
      expect(entries.length, file).toBeGreaterThan(0);
      // tsconfig.build.json compiles src/ and workers/ to dist/ file for file.
      for (const entry of entries) expect(existsSync(`${entry}.ts`), `${file}: dist/${entry}.js`).toBe(true);
    }
    expect(JSON.parse(read('tsconfig.build.json')).include).toEqual(['src', 'workers']);
  });

  it('docker-compose.yml gives no secret a default value (SECRETS_KEY must be set, passwords and tokens are empty unless given)', () => {
    const secretLines = read('docker-compose.yml')
      .split('\n')
      .filter((line) => /^\s+(SECRETS_KEY|ADMIN_PASSWORD|METRICS_TOKEN):/.test(line));
    expect(secretLines.length).toBe(3);
    for (const line of secretLines) expect(line).toMatch(/\$\{\w+(:\?[^}]*|:-)\}$/);
    expect(secretLines.find((l) => l.includes('SECRETS_KEY'))).toMatch(/\$\{SECRETS_KEY:\?/);
  });
});
