// One process of bench/lean-delivery.ts: a BullMQ worker whose job is a webhook delivery with none of
// the platform's code: the row read, the attempt claimed, a signed keep-alive POST, the outcome written.
// Arguments: <database url> <queue prefix> <receiver url> <true: both updates bump updated_at>.
import { createHmac } from 'node:crypto';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import postgres from 'postgres';
import { Pool } from 'undici';

const [databaseUrl, prefix, receiverUrl, bumps] = process.argv.slice(2);
const bump = bumps === 'true' ? ', updated_at = clock_timestamp()' : '';
const sql = postgres(databaseUrl, { max: 4, onnotice: () => {} });
const connection = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
const secret = 'lean-bench-secret';
const target = new URL(receiverUrl);
// The HTTP client the platform's deliveries use (src/services/webhooks/destination-connections.ts).
const connections = new Pool(target.origin);

async function post(body: Buffer, id: string): Promise<number> {
  const signature = createHmac('sha256', secret).update(`${id}.`).update(body).digest('base64');
  const answer = await connections.request({
    path: target.pathname,
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Webhook-Id': id, 'Webhook-Signature': `v1,${signature}` },
    body,
  });
  await answer.body.dump();
  return answer.statusCode;
}

const worker = new Worker<{ id: string }>(
  'lean-delivery',
  async (job) => {
    const { id } = job.data;
    const [row] = await sql.unsafe('select id, payload, attempts, status from lean_deliveries where id = $1', [id], { prepare: true });
    if (!row || row.status !== 'pending') return;
    await sql.unsafe(
      `update lean_deliveries set attempts = attempts + 1, last_attempt_at = clock_timestamp()${bump} where id = $1 and status = $2`,
      [id, 'pending'],
      { prepare: true },
    );
    const status = await post(Buffer.from(row.payload as string), id);
    await sql.unsafe(
      `update lean_deliveries set status = $2, last_status = $3${bump} where id = $1`,
      [id, status < 300 ? 'delivered' : 'pending', status],
      { prepare: true },
    );
  },
  { connection, prefix, concurrency: 50 },
);
process.on('SIGTERM', () => {
  void (async () => {
    await worker.close();
    await sql.end();
    connection.disconnect();
    process.exit(0);
  })();
});
