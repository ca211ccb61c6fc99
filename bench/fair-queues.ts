// Fair queues (issue 23): organisation A emits 20,000 events at once, each a webhook to A's
// endpoint; organisation B books once a second meanwhile. Prints B's booking-to-webhook-received
// p50/p99 with no backlog and during A's, and A's drain time. Target: B's p99 during the backlog
// within 2× its p99 without.
// Usage: npx tsx bench/fair-queues.ts [backlog=20000] [--quiet SECONDS=120] [--code DIR] [--stages]
//   --quiet: how long B books with no backlog. A p99 compares only over like samples: of 20 bookings it
//   is their slowest (about the 97th percentile), of A's ~200 s of backlog the third slowest, so the
//   quiet phase is long enough for its p99 to be a second-slowest (120 bookings).
//   --code DIR runs the server, workers and outbox of another checkout (e.g. a worktree of the commit
//   before fair queues, its node_modules linked), to measure the before and after on this machine.
//   --stages also prints where each of B's webhooks waited, from the queues' event streams: this
//   process then reads an event for each of A's 40,000 jobs, which delays its own timing of B.
// A's and B's partner endpoints run in processes of their own (bench/support/fair-receiver.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { describeStages, watchJobStarts, type Booking } from './support/fair-stages.js';
import { spawnServer } from './support/spawn-server.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { code: { type: 'string' }, quiet: { type: 'string', default: '120' }, stages: { type: 'boolean', default: false } },
});
const backlog = Number(positionals[0] ?? 20_000);
const codeDir = path.resolve(values.code ?? '.');
await prepareBenchDatabase('floorline_bench_fair_queues');
const env = { ...benchServerEnv(), WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' };

/** A partner endpoint in a process of its own (bench/support/fair-receiver.ts): `each` records every reservation's arrival, a count when that many arrived. */
async function startReceiver(
  mode: 'each' | number,
): Promise<{ process: ChildProcess; url: string; arrivals: Map<string, number>; drainedAt: () => number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('bench/support/fair-receiver.ts'), String(mode)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const arrivals = new Map<string, number>();
  let drainedAt = 0;
  const url = await new Promise<string>((resolve) => {
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const [word, ...values] = line.split(' ');
      if (word === 'url') resolve(values[0]);
      if (word === 'arrived') arrivals.set(values[0], Number(values[1]));
      if (word === 'drained') drainedAt = Number(values[0]);
    });
  });
  return { process: child, url, arrivals, drainedAt: () => drainedAt };
}

function spawnCode(script: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', path.join(codeDir, script)], {
    cwd: codeDir,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const port = 3957;
const base = `http://127.0.0.1:${port}/api/v1`;
const a = await createBenchTenant({ tableCount: 24 });
const b = await createBenchTenant({ tableCount: 24 });
const receiverA = await startReceiver(backlog);
const receiverB = await startReceiver('each');
const processes: ChildProcess[] = [];
const call = async <T = unknown>(key: string, method: string, p: string, body?: unknown): Promise<T> => {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
};

try {
  processes.push(await spawnServer(path.join(codeDir, 'src/server.ts'), env, port));
  processes.push(spawnCode('workers/events.ts'), spawnCode('workers/webhooks.ts'));
  for (const [tenant, receiver] of [
    [a, receiverA],
    [b, receiverB],
  ] as const) {
    const endpoint = await call<{ webhookEndpoint: { id: string } }>(tenant.key, 'POST', '/webhook-endpoints', {
      venueId: tenant.venueId,
      url: receiver.url,
    });
    await call(tenant.key, 'POST', '/automations', {
      venueId: tenant.venueId,
      name: 'Partner',
      eventTypes: ['reservation_created'],
      action: { type: 'partner_notification', endpointId: endpoint.webhookEndpoint.id },
    });
  }

  const times = [
    '12:00',
    '12:15',
    '12:30',
    '12:45',
    '13:00',
    '13:15',
    '13:30',
    '13:45',
    '14:00',
    '19:00',
    '19:15',
    '19:30',
    '19:45',
    '20:00',
  ];
  let booked = 0;
  /** B books once a second while `until` is false; returns each booking with its webhook's arrival. */
  async function bookOncePerSecond(until: () => boolean, minimum: number): Promise<Booking[]> {
    const sent: Booking[] = [];
    while (sent.length < minimum || !until()) {
      const at = Date.now();
      const day = new Date(Date.now() + (2 + Math.floor(booked / times.length)) * 864e5).toISOString().slice(0, 10);
      const created = await call<{ reservation: { id: string } }>(b.key, 'POST', '/reservations', {
        venueId: b.venueId,
        serviceDate: day,
        time: times[booked % times.length],
        partySize: 2,
      });
      booked++;
      sent.push({ id: created.reservation.id, at, answeredAt: Date.now() });
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 1000 - (Date.now() - at))));
    }
    const deadline = Date.now() + 120_000;
    while (sent.some((s) => !receiverB.arrivals.has(s.id)) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    return sent.map((s) => ({ ...s, arrivedAt: receiverB.arrivals.get(s.id) }));
  }
  const latencies = (bookings: Booking[]) => bookings.map((s) => (s.arrivedAt ?? Number.POSITIVE_INFINITY) - s.at);
  const percentile = (list: number[], p: number) =>
    [...list].sort((x, y) => x - y)[Math.min(list.length - 1, Math.ceil((p / 100) * list.length) - 1)];

  // The process that will emit A's backlog starts (compiles, connects) before anything is measured.
  const backlogRun = spawn(
    process.execPath,
    ['--import', 'tsx', path.resolve('bench/support/fair-backlog.ts'), codeDir, a.organisationId, a.venueId, String(backlog)],
    {
      cwd: codeDir,
      env: { ...process.env, ...env },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  await new Promise((resolve) => backlogRun.stdout!.once('data', resolve));
  // Warm-up: the workers compile and connect before the first figure counts.
  await bookOncePerSecond(() => true, 3);
  const watched = values.stages ? await watchJobStarts() : undefined;
  const quietBookings = await bookOncePerSecond(() => true, Number(values.quiet));
  const quiet = latencies(quietBookings);
  const emitted = Date.now();
  backlogRun.stdin!.end('go\n');
  const backlogEmitted = new Promise((resolve) => backlogRun.on('exit', resolve));
  const drained = () => receiverA.drainedAt() > 0;
  const busyBookings = await bookOncePerSecond(drained, 10);
  const busy = latencies(busyBookings);
  await backlogEmitted;
  await watched?.close();
  console.log(`code: ${codeDir}`);
  console.log(`B, no backlog (${quiet.length} bookings): p50 ${percentile(quiet, 50)} ms, p99 ${percentile(quiet, 99)} ms`);
  console.log(
    `B, during A's backlog of ${backlog} (${busy.length} bookings): p50 ${percentile(busy, 50)} ms, p99 ${percentile(busy, 99)} ms`,
  );
  console.log(`ratio of p99: ${(percentile(busy, 99) / percentile(quiet, 99)).toFixed(2)} (target ≤ 2)`);
  console.log(`A's ${backlog} webhooks received ${((receiverA.drainedAt() - emitted) / 1000).toFixed(1)} s after the backlog was emitted`);
  const worstByWindow = new Map<number, number>();
  for (const [i, booking] of busyBookings.entries()) {
    const window = Math.floor((booking.at - emitted) / 10_000) * 10;
    worstByWindow.set(window, Math.max(worstByWindow.get(window) ?? 0, busy[i]));
  }
  const firstSeconds = busyBookings.filter((booking) => booking.at - emitted < 10_000);
  console.log(
    `B's bookings in the first 10 s of the backlog (sent at, request, webhook): ${firstSeconds.map((s) => `+${((s.at - emitted) / 1000).toFixed(1)} s ${s.answeredAt - s.at}/${(s.arrivedAt ?? Infinity) - s.at} ms`).join(', ')}`,
  );
  console.log(`B's slowest webhook by 10 s of the backlog: ${[...worstByWindow].map(([s, ms]) => `${s} s: ${ms} ms`).join(', ')}`);
  if (watched) {
    console.log('where B waited, no backlog:');
    for (const line of await describeStages(quietBookings, watched)) console.log(line);
    console.log("where B waited, during A's backlog:");
    for (const line of await describeStages(busyBookings, watched)) console.log(line);
  }
} finally {
  for (const child of processes) child.kill('SIGTERM');
  receiverA.process.kill('SIGTERM');
  receiverB.process.kill('SIGTERM');
  const sql = (await import('../src/db/client.js')).pool();
  await sql.end();
}
