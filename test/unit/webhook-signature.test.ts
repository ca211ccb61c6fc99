import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, signatureHeader, signedHeaders, standardSignatureHeader } from '../../src/lib/webhook-signature.js';

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

  it.each([
    { scheme: 'service-v1' as const, format: /^whsec_[A-Za-z0-9_-]{43}$/, encoding: 'base64url' as const },
    { scheme: 'standard-webhooks' as const, format: /^whsec_[A-Za-z0-9+/]{43}=$/, encoding: 'base64' as const },
  ])("generates $scheme secrets in that scheme's format", ({ scheme, format, encoding }) => {
    const generated = generateWebhookSecret(scheme);
    expect(generated).toMatch(format);
    expect(Buffer.from(generated.slice(6), encoding)).toHaveLength(32);
  });

  it.each([
    { parts: 1, secrets: [`whsec_${Buffer.alloc(32, 1).toString('base64')}`] },
    { parts: 2, secrets: [`whsec_${Buffer.alloc(32, 1).toString('base64')}`, `whsec_${Buffer.alloc(32, 2).toString('base64')}`] },
  ])('writes one v1, signature per secret, newest first, separated by a space ($parts)', ({ secrets, parts }) => {
    const header = standardSignatureHeader(secrets, '5', 'k', 'b');
    expect(header.split(' ')).toHaveLength(parts);
    secrets.forEach((s, i) => {
      const expected = createHmac('sha256', Buffer.from(s.slice(6), 'base64'))
        .update('k.5.b')
        .digest('base64');
      expect(header.split(' ')[i]).toBe(`v1,${expected}`);
    });
  });

  it.each([
    { scheme: 'service-v1' as const, names: ['X-Service-Idempotency-Key', 'X-Service-Signature', 'X-Service-Timestamp'] },
    { scheme: 'standard-webhooks' as const, names: ['webhook-id', 'webhook-signature', 'webhook-timestamp'] },
  ])('sends the three headers of $scheme only', ({ scheme, names }) => {
    const headers = signedHeaders(scheme, [secret], 'automation:r:0', Buffer.from('{}'), new Date(5_000));
    expect(Object.keys(headers).sort()).toEqual(names);
    expect(Object.values(headers)).toContain('5');
    expect(Object.values(headers)).toContain('automation:r:0');
  });
});
