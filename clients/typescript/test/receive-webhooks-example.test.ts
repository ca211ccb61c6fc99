import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { computeSignature } from '@floorline/client';
import { createWebhookReceiver } from '../examples/receive-webhooks.js';

const secret = `whsec_${'k'.repeat(43)}`;
const servers: Array<{ close: () => void }> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

/** One signed delivery, as Floorline sends it; answered within 5 s or the fetch fails. */
async function deliver(port: number, idempotencyKey: string): Promise<number> {
  const body = JSON.stringify({ id: idempotencyKey, eventId: null, type: 'webhook_test', data: {}, automation: null });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const res = await fetch(`http://127.0.0.1:${port}/`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'x-service-signature': `v1=${computeSignature(secret, timestamp, idempotencyKey, body)}`,
      'x-service-timestamp': timestamp,
      'x-service-idempotency-key': idempotencyKey,
    },
    body,
    signal: AbortSignal.timeout(5000),
  });
  await res.arrayBuffer();
  return res.status;
}

describe('the example receiver (clients/typescript/examples/receive-webhooks.ts)', () => {
  it('answers 500 when processing fails, so the delivery is retried, and processes the retry', async () => {
    const processed: string[] = [];
    let failNext = true;
    const receiver = createWebhookReceiver({
      secrets: [secret],
      onEvent: (event) => {
        if (failNext) {
          failNext = false;
          throw new Error('the partner database is down');
        }
        processed.push(event.id);
      },
    });
    servers.push(receiver);
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    const { port } = receiver.address() as AddressInfo;

    expect(await deliver(port, 'test:one')).toBe(500);
    expect(processed).toEqual([]);
    // The retry carries the same key: not taken for a duplicate, since the first attempt was not processed.
    expect(await deliver(port, 'test:one')).toBe(200);
    expect(await deliver(port, 'test:one')).toBe(200);
    expect(processed).toEqual(['test:one']);
  });
});
