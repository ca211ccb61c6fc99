import { createHmac, randomUUID } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  receivedAt: number;
}

/** A status (with the body `ok`), or a status and the body to answer with. */
export type ReceiverAnswer = number | { status: number; body: string | Buffer };

/** What the receiver answers to the n-th request (0-based): an answer (now or once a promise resolves), or `hold` to keep the request open. */
export type ReceiverPolicy = (request: ReceivedWebhook, index: number) => ReceiverAnswer | Promise<ReceiverAnswer> | 'hold';

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  setPolicy: (policy: ReceiverPolicy) => void;
  /** The most requests this receiver has held open at once. */
  maxInFlight: () => number;
  /** Resolves once `count` requests have arrived. */
  waitFor: (count: number, timeoutMs?: number) => Promise<ReceivedWebhook[]>;
  close: () => Promise<void>;
}

/** A real HTTP receiver on 127.0.0.1 that records every request byte for byte. */
export async function startWebhookReceiver(policy: ReceiverPolicy = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  let current = policy;
  let inFlight = 0;
  let maxInFlight = 0;
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    maxInFlight = Math.max(maxInFlight, ++inFlight);
    res.on('close', () => inFlight--);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request = { path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks), receivedAt: Date.now() };
      const index = received.push(request) - 1;
      waiters.splice(0).forEach((wake) => wake());
      const answer = current(request, index);
      if (answer === 'hold') return;
      void Promise.resolve(answer).then((given) => {
        const { status, body } = typeof given === 'number' ? { status: given, body: 'ok' } : given;
        if (!res.destroyed)
          res.writeHead(status, status >= 300 && status < 400 ? { Location: 'http://127.0.0.1:1/elsewhere' } : {}).end(body);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/${randomUUID()}`,
    received,
    setPolicy: (p) => {
      current = p;
    },
    maxInFlight: () => maxInFlight,
    waitFor: async (count, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} webhook(s), received ${received.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 250));
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return received.slice(0, count);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The signature of docs/webhooks.md recomputed with node:crypto alone, independently of the service's signing code. */
export function expectedSignature(secret: string, request: ReceivedWebhook): string {
  const content = Buffer.concat([
    Buffer.from(`v1\n${request.headers['x-service-timestamp']}\n${request.headers['x-service-idempotency-key']}\n`),
    request.body,
  ]);
  return createHmac('sha256', Buffer.from(secret, 'utf8')).update(content).digest('hex');
}

/** The `v1=` values of the X-Service-Signature header, in order. */
export function signaturesOf(request: ReceivedWebhook): string[] {
  return String(request.headers['x-service-signature'] ?? '')
    .split(',')
    .map((part) => part.replace(/^v1=/, ''));
}
