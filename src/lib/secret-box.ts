import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const version = 'v1';

/** Encrypts a secret with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
export function sealSecret(plaintext: string, key: Buffer): string {
  if (key.length !== 32) throw new Error('the secrets key must be 32 bytes');
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [version, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
}

/** Decrypts a value of sealSecret; throws when the value was altered or sealed with another key. */
export function openSecret(sealed: string, key: Buffer): string {
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== version) throw new Error('not a sealed secret');
  const [, iv, tag, ciphertext] = parts.map((p) => Buffer.from(p, 'base64url'));
  if (iv.length !== 12 || tag.length !== 16) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, iv);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
}
