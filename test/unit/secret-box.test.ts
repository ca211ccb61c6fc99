import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { openSecret, sealSecret } from '../../src/lib/secret-box.js';

const key = randomBytes(32);

describe('secret box', () => {
  it.each(['whsec_abc', '', 'ünïcødé – 日本', 'x'.repeat(1000)])('round-trips %j', (plaintext) => {
    const sealed = sealSecret(plaintext, key);
    expect(sealed).not.toContain(plaintext || '\u0000');
    expect(openSecret(sealed, key)).toBe(plaintext);
  });

  it('uses a fresh IV for every seal', () => {
    expect(sealSecret('same', key)).not.toBe(sealSecret('same', key));
  });

  const sealed = sealSecret('whsec_secret', key);
  const [v, iv, tag, data] = sealed.split('.');
  const flip = (part: string) => {
    const bytes = Buffer.from(part, 'base64url');
    bytes[0] ^= 1;
    return bytes.toString('base64url');
  };
  it.each([
    { name: 'another key', value: sealed, key: randomBytes(32) },
    { name: 'an altered ciphertext', value: [v, iv, tag, flip(data)].join('.'), key },
    { name: 'an altered tag', value: [v, iv, flip(tag), data].join('.'), key },
    { name: 'an altered IV', value: [v, flip(iv), tag, data].join('.'), key },
    { name: 'an unknown version', value: ['v9', iv, tag, data].join('.'), key },
    { name: 'a malformed value', value: 'whsec_plain', key },
  ])('refuses $name', ({ value, key: k }) => {
    expect(() => openSecret(value, k)).toThrow();
  });

  it('needs a 32-byte key', () => {
    expect(() => sealSecret('x', randomBytes(16))).toThrow();
  });
});
