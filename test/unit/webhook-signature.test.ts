import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader } from '../../src/lib/webhook-signature.js';

const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';
const other = 'whsec_b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXI';

function reference(key: string, timestamp: string, idempotencyKey: string, body: string): string {
  return createHmac('sha256', key).update(`v1\n${timestamp}\n${idempotencyKey}\n${body}`).digest('hex');
}

describe('webhook signing', () => {
  it.each([
    { secrets: [secret], parts: 1 },
    { secrets: [secret, other], parts: 2 },
  ])('writes one v1= signature per secret, newest first ($parts)', ({ secrets, parts }) => {
    const header = signatureHeader(secrets, '5', 'k', 'b');
    expect(header.split(',')).toHaveLength(parts);
    expect(header.split(',')[0]).toBe(`v1=${reference(secret, '5', 'k', 'b')}`);
    if (parts === 2) expect(header.split(',')[1]).toBe(`v1=${reference(other, '5', 'k', 'b')}`);
  });

  it('refuses to sign without a secret', () => {
    expect(() => signatureHeader([], '5', 'k', 'b')).toThrow();
  });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});
