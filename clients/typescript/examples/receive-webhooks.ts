// A webhook receiver with @floorline/client: only node:http and the verification of docs/webhooks.md.
// Run: FLOORLINE_WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx clients/typescript/examples/receive-webhooks.ts
import http from 'node:http';
import { buffer } from 'node:stream/consumers';
import { fileURLToPath } from 'node:url';
import { createMemoryProcessedKeyStore, verifyFloorlineWebhook, type WebhookEvent } from '@floorline/client';

export interface ReceiverOptions {
  /** The secrets accepted now: one, or the new and the previous one while you change secret. Read at each request. */
  secrets: readonly string[];
  onEvent: (event: WebhookEvent) => Promise<void> | void;
}

export function createWebhookReceiver(options: ReceiverOptions): http.Server {
  // One process: the memory store. Several instances: implement `has(key)` over a shared table or Redis.
  const processed = createMemoryProcessedKeyStore();
  async function receive(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    // The raw bytes, not a parsed body: a re-serialised body does not verify.
    const rawBody = await buffer(req);
    const result = await verifyFloorlineWebhook({ rawBody, headers: req.headers, secrets: options.secrets, store: processed });
    if (!result.ok) {
      res.writeHead(400).end(result.reason);
      return;
    }
    // Already processed (a retry whose answer got lost): acknowledge only.
    if (!result.duplicate) {
      // Answer within 10 s; long work belongs in a queue of your own. Anything but a 2xx is retried.
      await options.onEvent(result.envelope);
      processed.add(result.idempotencyKey);
    }
    res.writeHead(200).end();
  }
  // node:http ignores what a handler returns: a failure of onEvent must become a 500 (retried by Floorline), not an
  // unhandled rejection that ends the receiver.
  return http.createServer((req, res) => {
    receive(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const receiver = createWebhookReceiver({
    secrets: (process.env.FLOORLINE_WEBHOOK_SECRET ?? '').split(',').filter(Boolean),
    onEvent: (event) => console.log(event.type, event.id),
  });
  receiver.listen(Number(process.env.PORT ?? 4000));
}
