// Reservation import end to end (issue 7): the web role and one worker-imports process run as child
// processes; POST /imports/reservations with 1,000 rows (past and future, guests by phone, external
// references, a few invalid rows) on a demo venue (24 tables, pacing at dinner), then GET /imports/:id
// until it is completed. Target: < 3 s from the POST to completion.
// Usage: npx tsx bench/imports.ts [rows=1000]
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';
import { freePort } from '../test/support/free-port.js';

const rowCount = Number(process.argv[2] ?? 1000);
await prepareBenchDatabase('floorline_bench_imports');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();

const { venueId, key } = await createBenchTenant({ tableCount: 24 });
await sql.end();

const today = instantToLocal('Europe/Rome', Date.now()).date;
const times = ['12:00', '12:30', '13:00', '13:30', '19:00', '19:30', '20:00', '20:30', '21:00', '21:30'];
const rows = Array.from({ length: rowCount }, (_, i) => {
  const past = i % 10 < 3;
  const row: Record<string, unknown> = {
    venueId: venueId,
    serviceDate: addDays(today, past ? -1 - (i % 60) : 1 + (i % 30)),
    time: times[i % times.length],
    partySize: 1 + (i % 6),
    externalRef: `bench-${i}`,
    channel: 'bench',
  };
  if (i % 2 === 0) Object.assign(row, { phone: `+39 347 ${String(i).padStart(7, '0')}`, guestName: `Guest ${i}` });
  if (i % 50 === 7) row.partySize = 0; // rejected: invalid_field
  return row;
});

const env = benchServerEnv();
// A port nobody listens on: other benchmarks may be running on this machine.
const port = await freePort();
const web = await spawnServer('src/server.ts', env, port);
const worker = spawn(process.execPath, ['--import', 'tsx', 'workers/imports.ts'], {
  env: { ...process.env, ...env },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const api = (path: string, init: RequestInit = {}) =>
  fetch(`http://127.0.0.1:${port}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
  }).then((r) => r.json());

try {
  // Let the worker connect to Redis before the clock starts.
  await new Promise((r) => setTimeout(r, 1500));
  const body = JSON.stringify({ rows });
  const started = performance.now();
  const { import: submitted } = (await api('/imports/reservations', { method: 'POST', body })) as { import: { id: string } };
  let record: Record<string, unknown>;
  for (;;) {
    ({ import: record } = (await api(`/imports/${submitted.id}`)) as { import: Record<string, unknown> });
    if (record.status !== 'processing') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const elapsed = performance.now() - started;
  const workerMs = new Date(record.completedAt as string).getTime() - new Date(record.createdAt as string).getTime();
  console.log(
    `rows ${record.totalRows}: created ${record.createdRows}, updated ${record.updatedRows}, rejected ${record.rejectedRows}, status ${record.status}`,
  );
  console.log(
    `end to end (POST → completed seen by GET): ${elapsed.toFixed(0)} ms (${((rowCount / elapsed) * 1000).toFixed(0)} rows/s), target < 3000 ms`,
  );
  console.log(`in the worker (createdAt → completedAt): ${workerMs} ms`);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  worker.kill('SIGTERM');
  web.kill('SIGTERM');
}
