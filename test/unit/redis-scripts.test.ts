import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadScript, scripts } from '../../src/redis/scripts.js';

const dir = 'src/redis/scripts';
const files = readdirSync(dir).filter((f) => f.endsWith('.lua'));

// Commands whose first argument is not a key.
const keylessCommands = new Set(['TIME']);

describe('Redis scripts', () => {
  it('are all defined by the loader, and the loader names no missing file', () => {
    expect(
      Object.values(scripts)
        .map((s) => `${s.name}.lua`)
        .sort(),
    ).toEqual(files.sort());
  });

  it.each(files)('%s: its header declares every key it touches, and every key is one of its KEYS', (file) => {
    const { lua, numberOfKeys } = loadScript(file.replace(/\.lua$/, ''));
    const body = lua.replace(/^--\[\[[\s\S]*?\]\]/, '');
    expect(numberOfKeys).toBeGreaterThan(0);
    // Every KEYS[n] the body uses is declared.
    for (const [, n] of body.matchAll(/KEYS\[(\d+)\]/g)) expect(Number(n), `KEYS[${n}] used`).toBeLessThanOrEqual(numberOfKeys);
    // Every redis.call's key is a KEYS[n] as such, never a name built inside the script.
    const calls = [...body.matchAll(/redis\.call\('(\w+)'(?:,\s*([^,)]+))?/g)];
    expect(calls.length).toBeGreaterThan(0);
    for (const [call, command, key] of calls) {
      if (!keylessCommands.has(command)) expect(key, call).toMatch(/^KEYS\[\d+\]$/);
    }
    // Includes are expanded; the Redis clock comes from its one snippet.
    expect(lua).not.toMatch(/@include/);
    expect(readFileSync(`${dir}/${file}`, 'utf8').match(/redis\.call\('TIME'\)/g) ?? []).toEqual([]);
  });

  it('declares its ARGV in the header for every ARGV it reads', () => {
    for (const file of files) {
      const text = readFileSync(`${dir}/${file}`, 'utf8');
      const header = /^--\[\[([\s\S]*?)\]\]/.exec(text)?.[1] ?? '';
      const declared = new Set([...header.matchAll(/^\s*ARGV\[(\d+)\]/gm)].map((m) => m[1]));
      const used = new Set([...text.slice(header.length).matchAll(/ARGV\[(\d+)\]/g)].map((m) => m[1]));
      expect(
        [...used].filter((n) => !declared.has(n)),
        file,
      ).toEqual([]);
    }
  });
});
