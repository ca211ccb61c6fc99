// What one webhook POST costs the process that sends it, alone: `postWebhook` (the address check, the
// kept-alive connection, the 1 KB body, the excerpt of the answer) against the two HTTP clients bare,
// Node's `http.request` with a keep-alive agent and undici's `request` (what postWebhook sends
// with, src/services/webhooks/destination-connections.ts), each with the same headers and body.
// The receiver runs in a child process; the three are measured in alternating rounds, each figure the
// median of its rounds: CPU per POST of this process (µs) and POSTs per second, at 4 at once (the
// default limit per destination).
// Usage: npx tsx bench/webhook-post.ts [posts=20000] [rounds=3]
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { Pool } from 'undici';
import { freePort } from '../test/support/free-port.js';

const posts = Number(process.argv[2] ?? 20000);
const rounds = Number(process.argv[3] ?? 3);
const inFlight = 4;

const port = await freePort();
const receiver = spawn(
  process.execPath,
  [
    '-e',
    `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(204).end()); }).listen(${port}, '127.0.0.1', () => console.log('up'));`,
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
// Ended with this process however it ends (an output pipe closed early included).
process.on('exit', () => receiver.kill());
await once(receiver.stdout!, 'data');
const url = `http://127.0.0.1:${port}/hooks`;

Object.assign(process.env, { LOG_LEVEL: 'warn' });
const { postWebhook } = await import('../src/services/webhooks/post-webhook.js');

const body = Buffer.alloc(1024, 'a');
const headers = {
  'Content-Type': 'application/json',
  'User-Agent': 'service-webhook/1',
  'webhook-id': 'd0f8c0de-0000-4000-8000-000000000000',
  'webhook-timestamp': '1796000000',
  'webhook-signature': `v1,${'x'.repeat(44)}`,
};
const agent = new http.Agent({ keepAlive: true });
// As many connections as POSTs at once, as postWebhook opens (one request at a time on each).
const client = new Pool(`http://127.0.0.1:${port}`, { connections: inFlight });

const senders: Record<string, () => Promise<number | null>> = {
  postWebhook: async () => (await postWebhook({ url, headers, body, allowPrivate: true })).status,
  'node:http': () =>
    new Promise((resolve, reject) => {
      const request = http.request(
        { method: 'POST', host: '127.0.0.1', port, path: '/hooks', agent, headers: { ...headers, 'Content-Length': body.length } },
        (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        },
      );
      request.on('error', reject);
      request.end(body);
    }),
  undici: async () => {
    const answer = await client.request({ method: 'POST', path: '/hooks', headers, body });
    await answer.body.dump();
    return answer.statusCode;
  },
};

async function run(send: () => Promise<number | null>, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next++ < count) if ((await send()) !== 204) throw new Error('the receiver did not answer 204');
    }),
  );
}

const results: Record<string, Array<{ cpuMicros: number; perSecond: number }>> = {};
for (const send of Object.values(senders)) await run(send, posts / 4); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const [name, send] of Object.entries(senders)) {
    const cpu = process.cpuUsage();
    const started = performance.now();
    await run(send, posts);
    const used = process.cpuUsage(cpu);
    (results[name] ??= []).push({
      cpuMicros: (used.user + used.system) / posts,
      perSecond: posts / ((performance.now() - started) / 1000),
    });
  }
}
const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)];
for (const [name, figures] of Object.entries(results)) {
  console.log(
    `${name.padEnd(12)} ${median(figures.map((f) => f.cpuMicros)).toFixed(1)} µs of CPU per POST, ${median(figures.map((f) => f.perSecond)).toFixed(0)} POSTs/s (${posts} at ${inFlight} at once, median of ${rounds})`,
  );
}
await client.close();
agent.destroy();
process.exit(0);
