import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  computeSignature,
  computeStandardSignature,
  createMemoryProcessedKeyStore,
  parseSignatureHeader,
  parseStandardSignatureHeader,
  signedContent,
  verifyWebhook,
  type VerifyWebhookInput,
} from '../src/verify-webhook.js';

const secret = 'whsec_bmV3LW5ldy1uZXctbmV3LW5ldy1uZXctbmV3LW5ldy1uZXc';
const oldSecret = 'whsec_b2xkLW9sZC1vbGQtb2xkLW9sZC1vbGQtb2xkLW9sZC1vbGQ';
const now = new Date('2030-05-01T12:00:00.000Z');
const ts = String(now.getTime() / 1000);
const key = 'automation:3f1c2b9e-0000-4000-8000-000000000000:0';
const body = '{"id":"automation:3f1c2b9e-0000-4000-8000-000000000000:0","type":"reservation_created","data":{"reservation":{"id":"r"}}}';

const sign = (s: string, timestamp = ts, b = body, k = key) => createHmac('sha256', s).update(`v1\n${timestamp}\n${k}\n${b}`).digest('hex');

function request(overrides: Partial<VerifyWebhookInput> = {}, headers: Record<string, string> = {}): VerifyWebhookInput {
  return {
    rawBody: Buffer.from(body),
    headers: { 'x-service-signature': `v1=${sign(secret)}`, 'x-service-timestamp': ts, 'x-service-idempotency-key': key, ...headers },
    secrets: secret,
    now,
    ...overrides,
  };
}

// The reference signature is recomputed here with node:crypto alone, independently of computeSignature.
describe('verifyWebhook', () => {
  it.each([
    { name: 'a single signature', input: request() },
    { name: 'the body as a string', input: request({ rawBody: body }) },
    {
      name: 'the new signature of a rotation pair',
      input: request({}, { 'x-service-signature': `v1=${sign(secret)},v1=${sign(oldSecret)}` }),
    },
    {
      name: 'the previous signature of a rotation pair',
      input: request({ secrets: oldSecret }, { 'x-service-signature': `v1=${sign(secret)},v1=${sign(oldSecret)}` }),
    },
    { name: 'a receiver holding two secrets', input: request({ secrets: [oldSecret, secret] }) },
    { name: 'a timestamp 5 minutes old', input: request({ now: new Date(now.getTime() + 300_000) }) },
    { name: 'a timestamp 5 minutes ahead', input: request({ now: new Date(now.getTime() - 300_000) }) },
    {
      name: 'a Headers object',
      input: request({
        headers: new Headers({ 'X-Service-Signature': `v1=${sign(secret)}`, 'X-Service-Timestamp': ts, 'X-Service-Idempotency-Key': key }),
      }),
    },
  ])('accepts $name', async ({ input }) => {
    const result = await verifyWebhook(input);
    expect(result).toMatchObject({ ok: true, duplicate: false, idempotencyKey: key, timestamp: Number(ts) });
    if (result.ok) expect(result.envelope.type).toBe('reservation_created');
  });

  it.each([
    { name: 'a parsed body', input: request({ rawBody: JSON.parse(body) }), reason: 'body_not_raw' },
    {
      name: 'a missing signature',
      input: { ...request(), headers: { 'x-service-timestamp': ts, 'x-service-idempotency-key': key } },
      reason: 'missing_headers',
    },
    { name: 'a non-numeric timestamp', input: request({}, { 'x-service-timestamp': 'yesterday' }), reason: 'missing_headers' },
    {
      name: 'a timestamp older than 5 minutes',
      input: request({ now: new Date(now.getTime() + 301_000) }),
      reason: 'timestamp_out_of_tolerance',
    },
    {
      name: 'a timestamp further than 5 minutes ahead',
      input: request({ now: new Date(now.getTime() - 301_000) }),
      reason: 'timestamp_out_of_tolerance',
    },
    { name: 'another secret', input: request({ secrets: oldSecret }), reason: 'signature_mismatch' },
    { name: 'an altered body', input: request({ rawBody: body.replace('"r"', '"s"') }), reason: 'signature_mismatch' },
    { name: 're-serialised JSON', input: request({ rawBody: JSON.stringify(JSON.parse(body), null, 2) }), reason: 'signature_mismatch' },
    {
      name: 'another timestamp with the old signature',
      input: request({}, { 'x-service-timestamp': String(Number(ts) + 1) }),
      reason: 'signature_mismatch',
    },
    {
      name: 'another idempotency key',
      input: request({}, { 'x-service-idempotency-key': 'automation:other:0' }),
      reason: 'signature_mismatch',
    },
    {
      name: 'a truncated signature',
      input: request({}, { 'x-service-signature': `v1=${sign(secret).slice(0, 62)}` }),
      reason: 'signature_mismatch',
    },
    {
      name: 'a signature of another scheme',
      input: request({}, { 'x-service-signature': `v2=${sign(secret)}` }),
      reason: 'signature_mismatch',
    },
    {
      name: 'a signed body that is not JSON',
      input: request({ rawBody: 'not json' }, { 'x-service-signature': `v1=${sign(secret, ts, 'not json')}` }),
      reason: 'invalid_body',
    },
    {
      name: 'a signed body that is not a JSON object',
      input: request({ rawBody: '[1]' }, { 'x-service-signature': `v1=${sign(secret, ts, '[1]')}` }),
      reason: 'invalid_body',
    },
  ])('refuses $name', async ({ input, reason }) => {
    expect(await verifyWebhook(input as VerifyWebhookInput)).toEqual({ ok: false, reason });
  });

  it('reports an idempotency key already processed as a duplicate', async () => {
    const store = createMemoryProcessedKeyStore();
    expect(await verifyWebhook(request({ store }))).toMatchObject({ ok: true, duplicate: false });
    store.add(key);
    expect(await verifyWebhook(request({ store }))).toMatchObject({ ok: true, duplicate: true });
    const asyncStore = { has: async (k: string) => k === key };
    expect(await verifyWebhook(request({ store: asyncStore }))).toMatchObject({ ok: true, duplicate: true });
  });

  it('forgets processed keys after their time to live', async () => {
    const store = createMemoryProcessedKeyStore(-1);
    store.add(key);
    expect(store.has(key)).toBe(false);
  });
});

describe('the v1 signing scheme', () => {
  it.each([
    { name: 'plain body', timestamp: '1700000000', key: 'automation:8f7c:0', body: '{"a":1}' },
    { name: 'empty body', timestamp: '1', key: 'k', body: '' },
    { name: 'multi-byte UTF-8 body', timestamp: '1700000001', key: 'automation:x:0', body: '{"name":"Zoë – 日本"}' },
    { name: 'body with line feeds', timestamp: '1700000002', key: 'automation:y:0', body: '{\n"a": "b"\n}\n' },
  ])('signs $name as HMAC-SHA256 over v1, timestamp, key and body', ({ timestamp, key, body }) => {
    const signature = computeSignature(secret, timestamp, key, body);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    expect(signature).toBe(sign(secret, timestamp, body, key));
    expect(computeSignature(secret, timestamp, key, Buffer.from(body, 'utf8'))).toBe(signature);
  });

  it.each([
    { change: 'timestamp', args: [secret, '1700000001', 'k', '{}'] },
    { change: 'idempotency key', args: [secret, '1700000000', 'k2', '{}'] },
    { change: 'body', args: [secret, '1700000000', 'k', '{} '] },
    { change: 'secret', args: [oldSecret, '1700000000', 'k', '{}'] },
  ] as Array<{ change: string; args: [string, string, string, string] }>)('changes with the $change', ({ args }) => {
    expect(computeSignature(...args)).not.toBe(computeSignature(secret, '1700000000', 'k', '{}'));
  });

  it('builds the signed content byte for byte', () => {
    expect(signedContent('12', 'key', Buffer.from([0xff, 0x00])).toString('hex')).toBe(
      Buffer.concat([Buffer.from('v1\n12\nkey\n'), Buffer.from([0xff, 0x00])]).toString('hex'),
    );
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
});

// Standard Webhooks: the reference is recomputed with node:crypto alone, keyed with the decoded secret.
const stdSecret = `whsec_${Buffer.from('standard-standard-standard-std!!').toString('base64')}`;
const stdOld = `whsec_${Buffer.from('previous-previous-previous-prev!').toString('base64')}`;
const stdSign = (s: string, timestamp = ts, b = body, id = key) =>
  createHmac('sha256', Buffer.from(s.slice('whsec_'.length), 'base64'))
    .update(`${id}.${timestamp}.${b}`)
    .digest('base64');

function standardRequest(overrides: Partial<VerifyWebhookInput> = {}, headers: Record<string, string> = {}): VerifyWebhookInput {
  return {
    rawBody: Buffer.from(body),
    headers: { 'webhook-signature': `v1,${stdSign(stdSecret)}`, 'webhook-timestamp': ts, 'webhook-id': key, ...headers },
    secrets: stdSecret,
    scheme: 'standard-webhooks',
    now,
    ...overrides,
  };
}

describe('verifyWebhook with the standard-webhooks scheme', () => {
  it.each([
    { name: 'a single signature', input: standardRequest() },
    {
      name: 'the new signature of a rotation pair',
      input: standardRequest({}, { 'webhook-signature': `v1,${stdSign(stdSecret)} v1,${stdSign(stdOld)}` }),
    },
    {
      name: 'the previous signature of a rotation pair',
      input: standardRequest({ secrets: stdOld }, { 'webhook-signature': `v1,${stdSign(stdSecret)} v1,${stdSign(stdOld)}` }),
    },
    {
      name: 'a signature of an unknown version beside a v1 one',
      input: standardRequest({}, { 'webhook-signature': `v1a,${'A'.repeat(43)}= v1,${stdSign(stdSecret)}` }),
    },
  ])('accepts $name', async ({ input }) => {
    expect(await verifyWebhook(input)).toMatchObject({ ok: true, idempotencyKey: key, timestamp: Number(ts) });
  });

  it.each([
    { name: 'the service-v1 headers only', input: standardRequest({}, { 'webhook-signature': '' }), reason: 'missing_headers' },
    { name: 'another secret', input: standardRequest({ secrets: stdOld }), reason: 'signature_mismatch' },
    { name: 'another webhook-id', input: standardRequest({}, { 'webhook-id': 'automation:other:0' }), reason: 'signature_mismatch' },
    {
      name: 'another timestamp',
      input: standardRequest({}, { 'webhook-timestamp': String(Number(ts) + 1) }),
      reason: 'signature_mismatch',
    },
    { name: 'an altered body', input: standardRequest({ rawBody: body.replace('"r"', '"s"') }), reason: 'signature_mismatch' },
    {
      name: 'a comma-separated pair (not the standard)',
      input: standardRequest({}, { 'webhook-signature': `v1,${stdSign(stdOld)},v1,${stdSign(stdSecret)}` }),
      reason: 'signature_mismatch',
    },
    {
      name: 'a timestamp older than 5 minutes',
      input: standardRequest({ now: new Date(now.getTime() + 301_000) }),
      reason: 'timestamp_out_of_tolerance',
    },
  ])('refuses $name', async ({ input, reason }) => {
    expect(await verifyWebhook(input)).toEqual({ ok: false, reason });
  });

  it.each([
    { name: 'plain body', timestamp: '1700000000', id: 'automation:8f7c:0', body: '{"a":1}' },
    { name: 'multi-byte UTF-8 body', timestamp: '1700000001', id: 'test:x', body: '{"name":"Zoë – 日本"}' },
    { name: 'body with dots and line feeds', timestamp: '1', id: 'k', body: '{\n"a.b": "c."\n}\n' },
  ])('signs $name as base64 HMAC-SHA256 of id.timestamp.body keyed with the decoded secret', ({ timestamp, id, body: b }) => {
    expect(computeStandardSignature(stdSecret, id, timestamp, b)).toBe(stdSign(stdSecret, timestamp, b, id));
    expect(computeStandardSignature(stdSecret, id, timestamp, Buffer.from(b, 'utf8'))).toBe(stdSign(stdSecret, timestamp, b, id));
  });

  it.each([
    { header: `v1,${'a'.repeat(43)}=`, expected: [`${'a'.repeat(43)}=`] },
    { header: `v1,${'a'.repeat(43)}= v1,${'b'.repeat(43)}=`, expected: [`${'a'.repeat(43)}=`, `${'b'.repeat(43)}=`] },
    { header: `v1a,${'a'.repeat(43)}= v1,${'b'.repeat(43)}=`, expected: [`${'b'.repeat(43)}=`] },
    { header: `v1=${'a'.repeat(64)}`, expected: [] },
    { header: '', expected: [] },
  ])('parses "$header"', ({ header, expected }) => {
    expect(parseStandardSignatureHeader(header)).toEqual(expected);
  });
});
