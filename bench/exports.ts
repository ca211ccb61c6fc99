// Reservation export at steady memory (issue 7): 100,000 reservations of one venue over a year (a
// third with a guest), exported as CSV and as ndjson by the web role running as a child process. The
// server's resident memory is sampled from /proc/<pid>/status during each export: its peak must not
// grow with the size of the export (the rows stream from a database cursor).
// Usage: npx tsx bench/exports.ts [reservations=100000]
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { benchServerEnv, createBenchTenant, prepareBenchDatabase } from './support/bench-database.js';
import { spawnServer } from './support/spawn-server.js';
import { freePort } from '../test/support/free-port.js';

const count = Number(process.argv[2] ?? 100_000);
await prepareBenchDatabase('floorline_bench_exports');
const sql = (await import('../src/db/client.js')).pool();

const { organisationId, venueId, key } = await createBenchTenant();
const from = '2025-01-01';
const to = '2025-12-31';

// Written directly: the bench measures the export, not the booking path.
await sql`
  insert into guests (organisation_id, venue_id, phone, phone_national, first_name, last_name, allergens)
  select ${organisationId}, ${venueId}, '+39347' || lpad(g::text, 7, '0'), '347' || lpad(g::text, 7, '0'), 'Guest', 'Number ' || g, '{nuts}'
  from generate_series(1, 5000) g`;
await sql`
  insert into reservations (organisation_id, venue_id, service_date, time, starts_at, ends_at, party_size, status, source, notes, guest_id)
  select ${organisationId}, ${venueId}, d, t, (d + t::time) at time zone 'Europe/Rome', (d + t::time) at time zone 'Europe/Rome' + interval '90 minutes',
    1 + n % 8, (array['completed', 'completed', 'completed', 'no_show', 'cancelled'])[1 + n % 5], 'api',
    case when n % 7 = 0 then 'Allergic, "very" careful' end,
    case when n % 3 = 0 then (select id from guests where venue_id = ${venueId} and phone = '+39347' || lpad((1 + n % 5000)::text, 7, '0')) end
  from generate_series(0, ${count - 1}) n,
    lateral (select ${from}::date + (n % 365) as d, (array['12:00', '12:30', '13:00', '19:00', '19:30', '20:00', '20:30', '21:00'])[1 + n % 8] as t) x`;
await sql.end();

const env = benchServerEnv();
// A port nobody listens on: other benchmarks may be running on this machine.
const port = await freePort();
const web = await spawnServer('src/server.ts', env, port);

function memoryKb(field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${web.pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${field}:`));
  return Number(line?.replace(/\D/g, '') ?? 0);
}

async function exportOnce(format: 'csv' | 'ndjson') {
  let peakRss = memoryKb('VmRSS');
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, memoryKb('VmRSS'))), 20);
  const started = performance.now();
  const res = await fetch(
    `http://127.0.0.1:${port}/api/v1/exports/reservations?venueId=${venueId}&from=${from}&to=${to}&format=${format}`,
    {
      headers: { authorization: `Bearer ${key}` },
    },
  );
  if (res.status !== 200 || !res.body) throw new Error(`export answered ${res.status}`);
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  clearInterval(sampler);
  return { ms: performance.now() - started, bytes, lines, peakRss };
}

try {
  // A small export first, so that the baseline includes the code paths and the pool.
  await fetch(`http://127.0.0.1:${port}/api/v1/exports/reservations?venueId=${venueId}&from=${from}&to=${from}`, {
    headers: { authorization: `Bearer ${key}` },
  }).then((r) => r.text());
  const baseline = { rss: memoryKb('VmRSS'), hwm: memoryKb('VmHWM') };
  console.log(`server before the exports: VmRSS ${(baseline.rss / 1024).toFixed(1)} MiB, VmHWM ${(baseline.hwm / 1024).toFixed(1)} MiB`);
  for (const format of ['csv', 'ndjson'] as const) {
    const r = await exportOnce(format);
    const rows = format === 'csv' ? r.lines - 1 : r.lines;
    console.log(
      `${format.padEnd(6)} ${rows} reservations, ${(r.bytes / 1048576).toFixed(1)} MiB in ${r.ms.toFixed(0)} ms ` +
        `(${((rows / r.ms) * 1000).toFixed(0)} rows/s); server peak VmRSS during it ${(r.peakRss / 1024).toFixed(1)} MiB`,
    );
  }
  console.log(`server VmHWM after both: ${(memoryKb('VmHWM') / 1024).toFixed(1)} MiB (before: ${(baseline.hwm / 1024).toFixed(1)} MiB)`);
  console.log(
    `load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
} finally {
  web.kill('SIGTERM');
}
