// POST /reservations across many venues (issue 4). Target: >= 500 bookings/s sustained, and not a
// single double booking nor a pacing block above its maxCovers afterwards (checked in SQL).
// Usage: npx tsx bench/reservations.ts [seconds=10] [venues=40] (after a warm-up of as many seconds)
import autocannon from 'autocannon';
import { prepareBenchDatabase } from './support/bench-database.js';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs } from './support/process-cpu.js';
import { spawnServer } from './support/spawn-server.js';

const seconds = Number(process.argv[2] ?? 10);
const venueCount = Number(process.argv[3] ?? 40);
await prepareBenchDatabase('floorline_bench_reservations');
const { createApiKey, createOrganisation } = await import('../src/services/keys/key-service.js');
const { createVenue } = await import('../src/services/venues/venue-service.js');
const { configureDemoVenue } = await import('../src/services/venue-config/demo-venue.js');
const { addDays, instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();

const org = await createOrganisation('Bench', false);
const venueIds: string[] = [];
for (let i = 0; i < venueCount; i++) {
  const venue = await createVenue(org.id, { name: `Bench ${i}`, timezone: 'Europe/Rome', countryCode: 'IT' });
  await configureDemoVenue(org.id, venue.id);
  venueIds.push(venue.id);
}
const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 });

const env = {
  DATABASE_URL: process.env.DATABASE_URL!,
  QUEUE_PREFIX: process.env.QUEUE_PREFIX!,
  LOG_LEVEL: 'warn',
  ADMIN_PASSWORD: 'bench',
};
const port = 3942;
const server = await spawnServer('src/server.ts', env, port);
const today = instantToLocal('Europe/Rome', Date.now()).date;
// The demo venue's grid: lunch 12:00–14:00 and dinner 19:00–22:00 every 15 minutes.
const times = [12, 13, 19, 20, 21].flatMap((h) => ['00', '15', '30', '45'].map((m) => `${h}:${m}`)).concat(['14:00', '22:00']);
const pick = <T>(list: readonly T[]) => list[Math.floor(Math.random() * list.length)];

/** Bookings at 32 connections, `body` choosing each request's venue, day and time. */
async function run(duration: number, body: () => Record<string, unknown>) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 32,
    duration,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    requests: [{ method: 'POST', path: '/api/v1/reservations', setupRequest: (req) => ({ ...req, body: JSON.stringify(body()) }) }],
  });
  const statuses = result.statusCodeStats as unknown as Record<string, { count: number }>;
  const count = (code: string) => statuses[code]?.count ?? 0;
  const others = Object.entries(statuses).filter(([code]) => code !== '201' && code !== '409');
  return { result, created: count('201'), refused: count('409'), others: others.map(([c, s]) => `${c}×${s.count}`).join(', ') || 'none' };
}

/** A booking of any venue, on any of the next 30 days, at any time of its grid. */
const spreadBooking = () => ({
  venueId: pick(venueIds),
  serviceDate: addDays(today, 1 + Math.floor(Math.random() * 30)),
  time: pick(times),
  partySize: 2 + Math.floor(Math.random() * 3),
});

try {
  // As long a warm-up, not counted: a cold server spends the first seconds compiling and preparing
  // each connection's statements (the web process's CPU per booking was a third higher without it).
  await run(seconds, spreadBooking);
  const cpuBefore = { web: processCpuMs(server.pid!), postgres: await postgresCpuSnapshot(sql) };
  const spread = await run(seconds, spreadBooking);
  console.log(
    `POST /reservations, 32 connections, ${venueCount} venues over 30 days: ${spread.result.requests.average.toFixed(0)} req/s, ${(spread.created / seconds).toFixed(0)} bookings/s   p50 ${spread.result.latency.p50} ms   p99 ${spread.result.latency.p99} ms   (target >= 500/s)`,
  );
  const requests = spread.result.requests.total;
  const perRequest = (ms: number) => (ms / requests).toFixed(2);
  const webMs = processCpuMs(server.pid!) - cpuBefore.web;
  const postgresMs = cpuUsedSince(cpuBefore.postgres, await postgresCpuSnapshot(sql));
  console.log(
    `  201: ${spread.created}   409 no_availability: ${spread.refused}   other: ${spread.others}   errors: ${spread.result.errors}`,
  );
  // The web process's budget: no more CPU per booking than PostgreSQL spends on it.
  console.log(`  CPU per request: web ${perRequest(webMs)} ms, PostgreSQL ${perRequest(postgresMs)} ms`);
  // Then everyone on one venue and day: tables and pacing blocks fill up, most requests lose.
  const hotDay = addDays(today, 45);
  const hot = await run(3, () => ({
    venueId: venueIds[0],
    serviceDate: hotDay,
    time: pick(times.slice(10, 18)),
    partySize: 2 + Math.floor(Math.random() * 3),
  }));
  console.log(
    `contended (one venue, one day, 3 s): 201: ${hot.created}   409: ${hot.refused}   other: ${hot.others}   errors: ${hot.result.errors}`,
  );
  const answered201 = spread.created + hot.created;

  const [{ doubles }] = await sql`
    select count(*)::int as doubles from reservation_tables a
    join reservation_tables b on a.table_id = b.table_id and a.reservation_id < b.reservation_id
    where a.live and b.live and a.during && b.during`;
  // Demo pacing: 40 covers per 30-minute block of dinner (19:00).
  const [{ overfull }] = await sql`
    select count(*)::int as overfull from (
      select venue_id, service_date, (extract(hour from time::time) * 60 + extract(minute from time::time) - 1140)::int / 30 as block, sum(party_size) as covers
      from reservations where time >= '19:00' and status not in ('cancelled', 'no_show')
      group by 1, 2, 3) blocks
    where covers > 40`;
  const [{ stored, created }] = await sql`
    select (select count(*)::int from reservations) as stored, (select count(*)::int from events where type = 'reservation_created') as created`;
  console.log(
    `  double bookings: ${doubles}   pacing blocks above maxCovers: ${overfull}   reservations stored: ${stored} (201s: ${answered201}), reservation_created events: ${created}`,
  );
  // Requests still in flight when the run stops may complete after autocannon stopped counting them.
  if (doubles || overfull || stored < answered201 || created !== stored) process.exitCode = 1;
} finally {
  server.kill('SIGTERM');
  await sql.end();
}
