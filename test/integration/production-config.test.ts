import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

/** Loads src/config.ts in a process of its own with `env`: its exit code and what it wrote to stderr. */
async function loadConfig(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const { NODE_ENV: _, SECRETS_KEY: __, ADMIN_PASSWORD: ___, WEBHOOKS_ALLOW_PRIVATE_TARGETS: ____, ...inherited } = process.env;
  try {
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '-e', "await import('./src/config.ts')"], {
      env: { ...inherited, ...env },
    });
    return { code: 0, stderr };
  } catch (err) {
    const failed = err as { code: number; stderr: string };
    return { code: failed.code, stderr: failed.stderr };
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
  ])('%s: exits 1 naming the variable', async (_name, env, message) => {
    const result = await loadConfig({ NODE_ENV: 'production', ...env });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
  });

  it('starts with a random key and a long admin password, or none (then generated)', async () => {
    expect((await loadConfig({ NODE_ENV: 'production', SECRETS_KEY: random, ADMIN_PASSWORD: 'a-Long-admin-Pass-9' })).code).toBe(0);
    expect((await loadConfig({ NODE_ENV: 'production', SECRETS_KEY: random, ADMIN_PASSWORD: '' })).code).toBe(0);
  });
});
