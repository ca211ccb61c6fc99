// A webhook receiver for the quickstart: plain Node, no dependency. It checks each delivery as
// docs/webhooks.md "Verifying a webhook" says (raw body, 5-minute timestamp window, HMAC-SHA256 of
// "v1\n<timestamp>\n<idempotency key>\n<body>" with the destination's secret, constant-time compare,
// each idempotency key once) and prints one line per delivery.
// Usage: WEBHOOK_SECRET=whsec_… PORT=4000 node docs/examples/webhook-receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const secret = process.env.WEBHOOK_SECRET;
if (!secret) throw new Error('set WEBHOOK_SECRET to the secret POST /webhook-endpoints returned');
const seen = new Set();

function verified(headers, body) {
  const timestamp = headers['x-service-timestamp'];
  const key = headers['x-service-idempotency-key'];
  const signatures = String(headers['x-service-signature'] ?? '').split(',');
  if (!timestamp || !key || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = Buffer.from(`v1=${createHmac('sha256', secret).update(`v1\n${timestamp}\n${key}\n`).update(body).digest('hex')}`);
  return signatures.some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected));
}

createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    if (!verified(req.headers, body)) {
      console.log('refused: bad signature or timestamp');
      res.writeHead(400).end();
      return;
    }
    const key = req.headers['x-service-idempotency-key'];
    const envelope = JSON.parse(body.toString('utf8'));
    if (!seen.has(key)) {
      seen.add(key);
      console.log(`verified ${envelope.type} ${envelope.data.reservation?.id ?? ''} ${envelope.data.reservation?.status ?? ''}`.trim());
    }
    res.writeHead(200).end();
  });
}).listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => console.log('listening'));
