// A partner endpoint for bench/fair-queues.ts, in a process of its own (A's and B's partners are
// different servers; in the bench's process A's 20,000 webhooks delayed the clock that times B's).
// Answers 200 at once. Prints "url <url>" when listening, then either "arrived <reservation id>
// <epoch ms>" for each reservation's first webhook ("each"), or "drained <epoch ms>" once that many
// distinct reservations' webhooks have arrived (a count).
// Usage: node --import tsx bench/support/fair-receiver.ts each|<count>
import { createServer } from 'node:http';

const mode = process.argv[2];
const expected = Number(mode);
const arrived = new Set<string>();
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (chunk: Buffer) => (body += chunk.toString()));
  req.on('end', () => {
    const id = (JSON.parse(body) as { data: { reservation?: { id: string } } }).data.reservation?.id;
    if (id && !arrived.has(id)) {
      arrived.add(id);
      if (mode === 'each') process.stdout.write(`arrived ${id} ${Date.now()}\n`);
      else if (arrived.size === expected) process.stdout.write(`drained ${Date.now()}\n`);
    }
    res.end('ok');
  });
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number };
  process.stdout.write(`url http://127.0.0.1:${port}/hooks\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
