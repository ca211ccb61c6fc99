import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeSignature, generateWebhookSecret, parseSignatureHeader, signatureHeader, signedContent } from '../../src/lib/webhook-signature.js';

const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA';
const other = 'whsec_b3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXItb3RoZXI';

function reference(key: string, timestamp: string, idempotencyKey: string, body: string): string {
  return createHmac('sha256', key).update(`v1\n${timestamp}\n${idempotencyKey}\n${body}`).digest('hex');
}

describe('webhook signature', () => {
  it.each([
    { name: 'plain body', timestamp: '1700000000', key: 'automation:8f7c:0', body: '{"a":1}' },
    { name: 'empty body', timestamp: '1', key: 'k', body: '' },
    { name: 'multi-byte UTF-8 body', timestamp: '1700000001', key: 'automation:x:0', body: '{"name":"Zoë – 日本"}' },
    { name: 'body with line feeds', timestamp: '1700000002', key: 'automation:y:0', body: '{\n"a": "b"\n}\n' },
  ])('signs $name as HMAC-SHA256 over v1, timestamp, key and body', ({ timestamp, key, body }) => {
    const signature = computeSignature(secret, timestamp, key, body);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signature).toBe(reference(secret, timestamp, key, body));
    expect(computeSignature(secret, timestamp, key, Buffer.from(body, 'utf8'))).toBe(signature);
  });

  it.each([
    { change: 'timestamp', args: [secret, '1700000001', 'k', '{}'] },
    { change: 'idempotency key', args: [secret, '1700000000', 'k2', '{}'] },
    { change: 'body', args: [secret, '1700000000', 'k', '{} '] },
    { change: 'secret', args: [other, '1700000000', 'k', '{}'] },
  ] as Array<{ change: string; args: [string, string, string, string] }>)('changes with the $change', ({ args }) => {
    expect(computeSignature(...args)).not.toBe(computeSignature(secret, '1700000000', 'k', '{}'));
  });

  it('builds the signed content byte for byte', () => {
    expect(signedContent('12', 'key', Buffer.from([0xff, 0x00])).toString('hex')).toBe(Buffer.concat([Buffer.from('v1\n12\nkey\n'), Buffer.from([0xff, 0x00])]).toString('hex'));
  });

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

  it.each([
    { header: `v1=${'a'.repeat(64)}`, expected: ['a'.repeat(64)] },
    { header: `v1=${'a'.repeat(64)}, v1=${'b'.repeat(64)}`, expected: ['a'.repeat(64), 'b'.repeat(64)] },
    { header: `v0=${'a'.repeat(64)},v1=${'b'.repeat(64)}`, expected: ['b'.repeat(64)] },
    { header: 'v1=xyz', expected: [] },
    { header: '', expected: [] },
  ])('parses "$header"', ({ header, expected }) => {
    expect(parseSignatureHeader(header)).toEqual(expected);
  });

  it('generates whsec_ secrets of 32 random bytes', () => {
    const a = generateWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a.slice(6), 'base64url')).toHaveLength(32);
    expect(generateWebhookSecret()).not.toBe(a);
  });
});
