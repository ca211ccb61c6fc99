// Flat at scale (issue 24): every list, search, availability, booking, export, timer and sweep path
// on a group with one week of history against the same group with two years of it (equal pages: 50
// items on both sides, or as many as one week holds for a venue's name search). Prints p50 at 1
// connection and throughput at 16, and the ratio two years / one week (target: every row within 1.5×).
// Usage: npx tsx bench/scale.ts [--scale 1] [--seconds 3] [--rounds 2] [--reseed] [--only <text in a path name>[|<another>…]]
// The two databases (floorline_scale_<scale>_7d and _730d) are loaded by `npm run bench:seed` when
// missing (scale 1: about 15 minutes for both) and kept for the next run.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { readSeedRecord, seedRecordOf, type SeedRecord } from './support/scale-record.js';
import { spawnServer } from './support/spawn-server.js';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    seconds: { type: 'string', default: '3' },
    rounds: { type: 'string', default: '2' },
    reseed: { type: 'boolean', default: false },
    // Only the request paths whose name contains this text, and no background path: to remeasure a row.
    only: { type: 'string' },
  },
});
const scale = Number(values.scale);
const seconds = Number(values.seconds);
const rounds = Number(values.rounds);
const only = values.only?.split('|');
const histories = [
  { label: 'one week', days: 7 },
  { label: 'two years', days: 730 },
] as const;

function runChild(args: string[], env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      process.stderr.write(chunk);
    });
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

async function ensureSeeded(days: number): Promise<SeedRecord> {
  const database = seedRecordOf(scale, days);
  const existing = values.reseed ? null : await readSeedRecord(database);
  if (existing) return existing;
  await runChild(['bench/seed.ts', '--scale', String(scale), '--history-days', String(days), '--database', database]);
  const record = await readSeedRecord(database);
  if (!record) throw new Error(`the seed of ${database} left no record`);
  return record;
}

interface Path {
  name: string;
  method?: 'GET' | 'POST';
  path: string;
  /** A fresh body per request (bookings spread over venues and days). */
  body?: () => unknown;
  /** The status every answer should have (a refusal's 409); any 2xx when not given. */
  status?: number;
}

const localDate = (offsetDays: number) => {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Rome' }).format(new Date());
  const d = new Date(`${today}T12:00:00Z`);
  d.setUTCDate(d.getUTCDate() + offsetDays);
  return d.toISOString().slice(0, 10);
};

/**
 * Books the party of `booking` at the first available time of its day, again and again, until no time
 * is left: the day of a refused booking is full at every time (its answer proposes no alternative).
 */
async function fillDay(base: string, key: string, booking: { venueId: string; serviceDate: string; partySize: number }): Promise<void> {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const slotsPath = `/api/v1/availability/slots?venueId=${booking.venueId}&serviceDate=${booking.serviceDate}&partySize=${booking.partySize}`;
  for (let booked = 0; booked < 1000; booked++) {
    const slots = (await (await fetch(`${base}${slotsPath}`, { headers })).json()) as { data: { time: string }[] };
    if (!slots.data.length) return;
    const res = await fetch(`${base}/api/v1/reservations`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ ...booking, time: slots.data[0].time }),
    });
    if (res.status !== 201) throw new Error(`filling ${booking.serviceDate}: ${res.status} ${await res.text()}`);
  }
  throw new Error(`${booking.serviceDate} still has free times after 1,000 bookings`);
}

/** The request paths, with ids read from the seeded database (the same choice on both). */
async function pathsOf(record: SeedRecord, base: string): Promise<Path[]> {
  const db = postgres(record.databaseUrl, { max: 1, onnotice: () => {} });
  const venues = await db<{ id: string }[]>`select id from venues where organisation_id = ${record.organisationId} order by created_at, id`;
  const venueId = venues[0].id;
  const [guest] = await db<
    { id: string; phone: string }[]
  >`select id, phone from guests where venue_id = ${venueId} order by phone limit 1`;
  // The number a host types for a caller, as it is dialled: a guest of the week's book (the seed
  // numbers the guests of every venue alike, so 200 guests of the organisation have it).
  const [caller] = await db<
    { phone_national: string }[]
  >`select phone_national from guests where venue_id = ${venueId} order by phone offset 77 limit 1`;
  const [reservation] = await db<{ id: string }[]>`
    select id from reservations where venue_id = ${venueId} and service_date = ${localDate(-3)} and status = 'completed' order by time limit 1`;
  await db.end();
  const secondPage = async (path: string) => {
    const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${record.key}` } });
    const page = (await res.json()) as { nextCursor: string | null };
    return `${path}&cursor=${encodeURIComponent(page.nextCursor ?? '')}`;
  };
  const times = ['12:00', '12:45', '13:15', '19:45', '20:15', '21:15'];
  const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];
  const future = localDate(3);
  // A day no other path books (the spread bookings take days 15 to 59), of a venue no other path reads.
  const fullDay = { venueId: venues[1].id, serviceDate: localDate(70), partySize: 2 };
  await fillDay(base, record.key, fullDay);
  return [
    { name: 'GET /reservations (venue, first page)', path: `/api/v1/reservations?venueId=${venueId}&limit=50` },
    { name: 'GET /reservations (venue, second page)', path: await secondPage(`/api/v1/reservations?venueId=${venueId}&limit=50`) },
    { name: 'GET /reservations (organisation)', path: `/api/v1/reservations?limit=50` },
    {
      name: 'GET /reservations (venue, one day)',
      path: `/api/v1/reservations?venueId=${venueId}&from=${localDate(-2)}&to=${localDate(-2)}&limit=50`,
    },
    { name: 'GET /reservations (organisation, two days)', path: `/api/v1/reservations?from=${localDate(2)}&to=${localDate(3)}&limit=50` },
    // Full pages on both sides: a venue's week holds ~10 cancelled reservations, the organisation's ~2,000.
    { name: 'GET /reservations (venue, status=confirmed)', path: `/api/v1/reservations?venueId=${venueId}&status=confirmed&limit=50` },
    { name: 'GET /reservations (organisation, status=cancelled)', path: `/api/v1/reservations?status=cancelled&limit=50` },
    { name: 'GET /reservations (guest)', path: `/api/v1/reservations?guestId=${guest.id}&limit=50` },
    { name: 'GET /reservations/{id}', path: `/api/v1/reservations/${reservation.id}` },
    { name: 'GET /reservations/{id}/history', path: `/api/v1/reservations/${reservation.id}/history` },
    { name: 'GET /availability', path: `/api/v1/availability?venueId=${venueId}&serviceDate=${future}&time=20:00&partySize=2` },
    { name: 'GET /availability/slots', path: `/api/v1/availability/slots?venueId=${venueId}&serviceDate=${future}&partySize=4` },
    {
      name: 'GET /availability/days (62 days)',
      path: `/api/v1/availability/days?venueId=${venueId}&from=${localDate(1)}&to=${localDate(62)}&partySize=2`,
    },
    {
      name: 'POST /reservations (200 venues)',
      method: 'POST',
      path: '/api/v1/reservations',
      body: () => ({
        venueId: pick(venues).id,
        serviceDate: localDate(15 + Math.floor(Math.random() * 45)),
        time: pick(times),
        partySize: 2,
      }),
    },
    {
      name: 'POST /reservations (refused, full day)',
      method: 'POST',
      path: '/api/v1/reservations',
      body: () => ({ ...fullDay, time: '20:00' }),
      status: 409,
    },
    { name: 'GET /guests (organisation)', path: `/api/v1/guests?limit=50` },
    { name: 'GET /guests?search= (organisation)', path: `/api/v1/guests?search=giulia&limit=50` },
    { name: 'GET /guests?search= (venue, name)', path: `/api/v1/guests?venueId=${venueId}&search=giulia&limit=50` },
    // The same search at equal pages: one week's venue holds 141 guests, 9 of them Giulia (the seed's
    // first names take turns, 1 in 16), so the row above returns 9 guests at one week and 50 of 313
    // at two years. A page of 9 is the largest both sides fill.
    { name: 'GET /guests?search= (venue, name, page of 9)', path: `/api/v1/guests?venueId=${venueId}&search=giulia&limit=9` },
    {
      name: 'GET /guests?search= (venue, phone digits)',
      path: `/api/v1/guests?venueId=${venueId}&search=${caller.phone_national}&limit=50`,
    },
    { name: 'GET /guests/lookup', path: `/api/v1/guests/lookup?venueId=${venueId}&phone=${encodeURIComponent(guest.phone)}` },
    { name: 'GET /events (first page)', path: `/api/v1/events?limit=50` },
    { name: 'GET /events (second page)', path: await secondPage(`/api/v1/events?limit=50`) },
    { name: 'GET /events?type= (rare type)', path: `/api/v1/events?type=reservation_late&limit=50` },
    { name: 'GET /events?venueId=', path: `/api/v1/events?venueId=${venueId}&limit=50` },
    { name: 'GET /webhook-deliveries', path: `/api/v1/webhook-deliveries?limit=50` },
    { name: 'GET /webhook-deliveries?status=discarded', path: `/api/v1/webhook-deliveries?status=discarded&limit=50` },
    { name: 'GET /webhook-deliveries?venueId=', path: `/api/v1/webhook-deliveries?venueId=${venueId}&limit=50` },
    {
      name: 'GET /exports/reservations (7 days, one venue)',
      path: `/api/v1/exports/reservations?venueId=${venueId}&from=${localDate(-7)}&to=${localDate(-1)}`,
    },
    { name: 'GET /reports/summary (7 days)', path: `/api/v1/reports/summary?venueId=${venueId}&from=${localDate(-7)}&to=${localDate(-1)}` },
    { name: 'GET /reports/occupancy', path: `/api/v1/reports/occupancy?venueId=${venueId}&serviceDate=${future}` },
  ];
}

interface Figures {
  p50: number;
  throughput: number;
  errors: number;
}

async function measure(base: string, key: string, path: Path, connections: number, duration: number) {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  return autocannon({
    url: base,
    connections,
    duration,
    requests: [
      {
        method: path.method ?? 'GET',
        path: path.path,
        setupRequest: (req) => ({ ...req, headers, ...(path.body ? { body: JSON.stringify(path.body()) } : {}) }),
      },
    ],
  });
}

interface Measured {
  record: SeedRecord;
  base: string;
  env: Record<string, string>;
  paths: Path[];
  figures: Map<string, Figures[]>;
}

async function startDatabase(record: SeedRecord, port: number): Promise<Measured & { server: ChildProcess }> {
  const env = {
    DATABASE_URL: record.databaseUrl,
    QUEUE_PREFIX: `{scale-bench-${port}}`,
    LOG_LEVEL: 'warn',
    ADMIN_PASSWORD: 'bench',
    METRICS_PORT: '0',
  };
  const server = await spawnServer('src/server.ts', env, port);
  const base = `http://127.0.0.1:${port}`;
  return { record, base, env, server, paths: await pathsOf(record, base), figures: new Map() };
}

async function measurePath(db: Measured, path: Path): Promise<void> {
  await measure(db.base, db.record.key, path, 4, 1);
  const single = await measure(db.base, db.record.key, path, 1, seconds);
  const loaded = await measure(db.base, db.record.key, path, 16, seconds);
  const unexpected = (result: autocannon.Result) =>
    path.status === undefined
      ? result.non2xx
      : Object.entries(result.statusCodeStats ?? {}).reduce((n, [code, s]) => n + (Number(code) === path.status ? 0 : (s.count ?? 0)), 0);
  const figures = {
    p50: single.latency.p50,
    throughput: loaded.requests.average,
    errors: unexpected(single) + unexpected(loaded) + single.errors + loaded.errors,
  };
  db.figures.set(path.name, [...(db.figures.get(path.name) ?? []), figures]);
  console.error(
    `${path.name} (${db.record.counts.reservations} reservations): p50 ${figures.p50} ms, ${figures.throughput} req/s${figures.errors ? `, ${figures.errors} not 2xx` : ''}`,
  );
}

const records = [];
for (const h of histories) records.push(await ensureSeeded(h.days));
// Both servers run side by side and each path is measured on one database then the other, in
// alternating rounds: whatever else the machine does weighs on both alike. The best round counts.
const started = await Promise.all(records.map((record, i) => startDatabase(record, 3960 + i)));
const results: Array<{ paths: Map<string, Figures>; timers: Record<string, number> }> = [];
try {
  for (let i = 0; i < started[0].paths.length; i++) {
    if (only && !only.some((text) => started[0].paths[i].name.includes(text))) continue;
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? started : [...started].reverse();
      for (const db of order) await measurePath(db, db.paths[i]);
    }
  }
} finally {
  for (const db of started) db.server.kill('SIGTERM');
}
for (const db of started) {
  const measuredTimers = values.only ? '{}' : (await runChild(['bench/support/scale-timers.ts'], db.env)).trim().split('\n').pop()!;
  const best = new Map(
    [...db.figures].map(([name, list]) => [
      name,
      {
        p50: Math.min(...list.map((f) => f.p50)),
        throughput: Math.max(...list.map((f) => f.throughput)),
        errors: list.reduce((n, f) => n + f.errors, 0),
      },
    ]),
  );
  const timers = JSON.parse(measuredTimers) as Record<string, number>;
  results.push({ paths: best, timers });
}

const [week, years] = results;
const ratio = (a: number, b: number) => (a > 0 ? b / a : Number.NaN);
const mark = (r: number) => (r > 1.5 ? ' ✗' : '');
console.log(`\nscale ${scale}: one week ${JSON.stringify(records[0].counts)}; two years ${JSON.stringify(records[1].counts)}\n`);
console.log('| path | one week p50 | two years p50 | growth | one week c=16 | two years c=16 | throughput ratio |');
console.log('|---|---|---|---|---|---|---|');
for (const [name, w] of week.paths) {
  const y = years.paths.get(name)!;
  const latency = ratio(w.p50, y.p50);
  const throughput = ratio(y.throughput, w.throughput);
  const errors = w.errors + y.errors ? ` (${w.errors}/${y.errors} not 2xx)` : '';
  console.log(
    `| ${name}${errors} | ${w.p50} ms | ${y.p50} ms | ${latency.toFixed(2)}×${mark(latency)} | ${w.throughput.toFixed(0)} req/s | ${y.throughput.toFixed(0)} req/s | ${throughput.toFixed(2)}×${mark(throughput)} |`,
  );
}
console.log('\n| background path (median of 7) | one week | two years | growth |');
console.log('|---|---|---|---|');
for (const [name, w] of Object.entries(week.timers)) {
  const y = years.timers[name];
  const growth = ratio(w, y);
  // The invariant check reads whole tables by design (every guest's tags, every table's occupants):
  // its target is a time, not a growth.
  const judged = name === 'cli check' ? ` (target < 10 s${y > 10_000 ? ' ✗' : ''})` : mark(growth);
  console.log(`| ${name} | ${w.toFixed(1)} ms | ${y.toFixed(1)} ms | ${growth.toFixed(2)}×${judged} |`);
}
