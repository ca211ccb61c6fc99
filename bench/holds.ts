// Slot holds (issue 12): the hold → book round trip of a booking widget at 1 connection — POST
// /availability/holds, then POST /reservations with its holdId — with the p50 of the pair and of
// each step (and a plain booking's, for scale), then SQL checks: no table held or booked twice,
// every hold consumed.
// Usage: npx tsx bench/holds.ts [seconds=10]
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
await prepareBenchDatabase('floorline_bench_holds');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();

const { venueId, key } = await createBenchTenant({ tableCount: 60 });

const port = 3943;
const server = await spawnServer('src/server.ts', benchServerEnv(), port);
const base = `http://127.0.0.1:${port}/api/v1`;
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const today = instantToLocal('Europe/Rome', Date.now()).date;
// The demo venue's grid: lunch 12:00–14:00 and dinner 19:00–22:00 every 15 minutes.
const times = [12, 13, 19, 20, 21].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)).concat(['14:00', '22:00']);
const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];

async function post<T>(path: string, body: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as T };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];

/** One guest: hold a slot, then book it. Null when the slot was full (a 409 at the hold). */
async function roundTrip(): Promise<{ hold: number; book: number } | null> {
  const slot = {
    venueId,
    serviceDate: addDays(today, 1 + Math.floor(Math.random() * 30)),
    time: pick(times),
    partySize: 2 + Math.floor(Math.random() * 3),
  };
  const started = performance.now();
  const held = await post<{ hold: { id: string } }>('/availability/holds', slot);
  const heldAt = performance.now();
  if (held.status === 409) return null;
  if (held.status !== 201) throw new Error(`hold: ${held.status} ${JSON.stringify(held.body)}`);
  const booked = await post('/reservations', { ...slot, holdId: held.body.hold.id });
  if (booked.status !== 201) throw new Error(`book: ${booked.status} ${JSON.stringify(booked.body)}`);
  return { hold: heldAt - started, book: performance.now() - heldAt };
}

try {
  for (let i = 0; i < 100; i++) await roundTrip(); // warm-up: JIT, pools, key cache
  const pairs: number[] = [];
  const holds: number[] = [];
  const books: number[] = [];
  let full = 0;
  const stopAt = performance.now() + seconds * 1000;
  while (performance.now() < stopAt) {
    const r = await roundTrip();
    if (!r) {
      full++;
      continue;
    }
    pairs.push(r.hold + r.book);
    holds.push(r.hold);
    books.push(r.book);
  }
  // The same machine, same moment: a plain booking without a hold, for scale.
  const plain: number[] = [];
  const plainStopAt = performance.now() + (seconds * 1000) / 2;
  while (performance.now() < plainStopAt) {
    const started = performance.now();
    const res = await post('/reservations', {
      venueId,
      serviceDate: addDays(today, 1 + Math.floor(Math.random() * 30)),
      time: pick(times),
      partySize: 2,
    });
    if (res.status === 201) plain.push(performance.now() - started);
  }
  for (const list of [pairs, holds, books, plain]) list.sort((a, b) => a - b);
  console.log(
    `hold → book round trip, 1 connection: ${pairs.length} in ${seconds} s   p50 ${percentile(pairs, 50).toFixed(1)} ms   p99 ${percentile(pairs, 99).toFixed(1)} ms` +
      `   (hold p50 ${percentile(holds, 50).toFixed(1)} ms, book p50 ${percentile(books, 50).toFixed(1)} ms; ${full} holds refused, slot full)`,
  );
  console.log(`  for scale, a plain POST /reservations at 1 connection: p50 ${percentile(plain, 50).toFixed(1)} ms`);
  const [{ doubles, left, booked }] = await sql`
    select
      (select count(*)::int from reservation_tables a join reservation_tables b on a.table_id = b.table_id and a.ctid < b.ctid
        where a.live and b.live and a.during && b.during) as doubles,
      (select count(*)::int from availability_holds) as left,
      (select count(*)::int from reservations) as booked`;
  console.log(`  tables held or booked twice: ${doubles}   holds left unconsumed: ${left}   reservations: ${booked}`);
  if (doubles || left) process.exitCode = 1;
} finally {
  server.kill('SIGTERM');
  await sql.end();
}
