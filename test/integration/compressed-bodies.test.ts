import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { logger } from '../../src/logger.js';
import { closeQueues } from '../../src/queues/queues.js';
import { checkConformance } from '../support/contract.js';
import { createTenant, useTestServer, type Tenant } from '../support/harness.js';

const server = useTestServer();
let tenant: Tenant;
beforeAll(async () => {
  tenant = await createTenant();
});
afterAll(async () => closeQueues());

const encoders = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync } as const;
const encodings = Object.keys(encoders) as (keyof typeof encoders)[];

async function send(path: string, encoding: string, body: Buffer) {
  const url = `${server.url}/api/v1${path}`;
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json', 'content-encoding': encoding },
    body: new Uint8Array(body),
  });
  const text = await res.text();
  checkConformance('POST', url, res.status, res.headers, text);
  return { status: res.status, body: text ? JSON.parse(text) : undefined, text };
}

let phone = 1000;
const routes = {
  guests: {
    path: '/guests',
    limitBytes: 1024 * 1024,
    valid: () => ({ venueId: tenant.venueId, phone: `+39334${phone++}000`, firstName: 'Zip' }),
    created: 201,
  },
  imports: {
    path: '/imports/guests',
    limitBytes: 5 * 1024 * 1024,
    valid: () => ({ rows: [{ venueId: tenant.venueId, phone: `+39335${phone++}000`, firstName: 'Zip' }] }),
    created: 202,
  },
} as const;

describe('compressed request bodies (Content-Encoding gzip, deflate, br)', () => {
  for (const [name, route] of Object.entries(routes)) {
    for (const encoding of encodings) {
      it(`${name}, ${encoding}: a valid body works, an undecodable one is 400 body, one larger than the limit once decoded is 413`, async () => {
        const errors = vi.spyOn(logger, 'error');
        const valid = await send(route.path, encoding, encoders[encoding](Buffer.from(JSON.stringify(route.valid()))));
        expect(valid.status, valid.text).toBe(route.created);

        const whole = encoders[encoding](Buffer.from(JSON.stringify(route.valid())));
        for (const broken of [
          Buffer.from('{"this is": "not compressed"}'),
          whole.subarray(0, Math.max(2, whole.length - 6)),
          Buffer.from([0x1f, 0x8b, 8, 0, 0, 0]),
        ]) {
          const r = await send(route.path, encoding, broken);
          expect(r.status, r.text).toBe(400);
          expect(r.body.error).toMatchObject({ code: 'invalid_request', details: { fields: ['body'] } });
        }

        // A few kilobytes on the wire, more than the route's limit once decoded.
        const padding = ' '.repeat(route.limitBytes + 1024);
        const bomb = await send(route.path, encoding, encoders[encoding](Buffer.from(`{"rows":${padding}[]}`)));
        expect(bomb.status, bomb.text).toBe(413);
        expect(bomb.body.error.code).toBe('payload_too_large');
        expect(errors).not.toHaveBeenCalled();
        errors.mockRestore();
      });
    }
  }
});
