import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../src/config.js';
import { compiledEntry } from '../support/entry-process.js';

/** What configuration `env` gives in production: the issues that stop the process, or none. */
function issuesOf(env: Record<string, string>): string[] {
  try {
    parseConfig({ NODE_ENV: 'production', ...env });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.issues;
    throw err;
  }
}

const random = 'k3J9xQ2mV7pL0aZ4tR8wY1cN6bH5sD3fG0eU2iO9';

describe('production refuses weak secrets (docs/security.md "Production settings")', () => {
  it.each([
    ['no SECRETS_KEY', {}, 'SECRETS_KEY: is required'],
    ['the old compose placeholder', { SECRETS_KEY: 'change-me-to-a-long-random-string' }, 'SECRETS_KEY: must be a random string'],
    ['a short key', { SECRETS_KEY: 'k3J9xQ2mV7pL0aZ4t' }, 'SECRETS_KEY: must be a random string'],
    ['a long key of few characters', { SECRETS_KEY: 'ab'.repeat(20) }, 'SECRETS_KEY: must be a random string'],
    ['a short admin password', { SECRETS_KEY: random, ADMIN_PASSWORD: 'x' }, 'ADMIN_PASSWORD: must be at least 16'],
    ['an empty SECRETS_KEY (compose ${X:-})', { SECRETS_KEY: '' }, 'SECRETS_KEY: is required'],
  ])('%s: refused, naming the variable', (_name, env, message) => {
    expect(issuesOf(env).join('\n')).toContain(message);
  });

  it('takes a random key and a long admin password, or none (then generated)', () => {
    expect(issuesOf({ SECRETS_KEY: random, ADMIN_PASSWORD: 'a-Long-admin-Pass-9' })).toEqual([]);
    expect(issuesOf({ SECRETS_KEY: random, ADMIN_PASSWORD: '' })).toEqual([]);
  });

  it('the web entry point exits 1 with the line naming the variable, before it connects to anything', async () => {
    const { NODE_ENV: _, SECRETS_KEY: __, ADMIN_PASSWORD: ___, WEBHOOKS_ALLOW_PRIVATE_TARGETS: ____, ...inherited } = process.env;
    const started = promisify(execFile)(process.execPath, [compiledEntry('src/server.ts')], {
      // Unreachable servers: a process that got past its configuration would hang or say so instead.
      env: { ...inherited, NODE_ENV: 'production', DATABASE_URL: 'postgres://postgres@127.0.0.1:1/none', REDIS_URL: 'redis://127.0.0.1:1' },
      timeout: 30_000,
    });
    const failed = (await started.then(
      () => ({ code: 0, stderr: '' }),
      (err: unknown) => err,
    )) as { code: number; stderr: string };
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain('Invalid environment variable SECRETS_KEY: is required');
  }, 40_000);
});
