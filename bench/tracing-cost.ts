// What tracing costs a booking (issue 46): POST /reservations at 32 connections against three
// servers on one database, in alternating rounds (medians): this code with tracing off, this code
// with tracing on (the default sampler, every span exported over OTLP/HTTP protobuf to a local
// receiver that accepts and drops them), and, with --code DIR, another checkout (the code before
// tracing, its node_modules linked) with tracing off, and with --ratio R tracing on with the sampler
// parentbased_traceidratio at R; with --code-on, that checkout with tracing on as well (two versions of
// tracing side by side). With the CPU per booking of each server.
// Targets: off within noise of the code before (<= 2 %); on <= 15 % slower than off.
// Usage: npx tsx bench/tracing-cost.ts [seconds=8] [rounds=3] [--code DIR [--code-on]] [--ratio R]
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { benchServerEnv, prepareBenchDatabase } from './support/bench-database.js';
import { mealTimes, runBookingLoad } from './support/booking-load.js';
import { startDropCollector } from './support/drop-collector.js';
import { processCpuMs } from './support/process-cpu.js';
import { profileFlags } from './support/profiling.js';
import { spawnServer } from './support/spawn-server.js';
import { median } from './support/statistics.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { code: { type: 'string' }, 'code-on': { type: 'boolean' }, ratio: { type: 'string' } },
});
const seconds = Number(positionals[0] ?? 8);
const rounds = Number(positionals[1] ?? 3);
for (const name of Object.keys(process.env)) if (name.startsWith('OTEL_')) delete process.env[name];
await prepareBenchDatabase('floorline_bench_tracing_cost');
const { createApiKey, createOrganisation } = await import('../src/services/keys/key-service.js');
const { createVenue } = await import('../src/services/venues/venue-service.js');
const { configureDemoVenue } = await import('../src/services/venue-config/demo-venue.js');
const { instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();

const collector = await startDropCollector();
const collectorUrl = collector.url;

const variants: Array<{ label: string; dir: string; port: number; env: Record<string, string> }> = [
  { label: 'this code, tracing off', dir: path.resolve('.'), port: 3951, env: {} },
  { label: 'this code, tracing on', dir: path.resolve('.'), port: 3952, env: { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl } },
  ...(values.code ? [{ label: `${values.code}, tracing off`, dir: path.resolve(values.code), port: 3953, env: {} }] : []),
  ...(values.code && values['code-on']
    ? [
        {
          label: `${values.code}, tracing on`,
          dir: path.resolve(values.code),
          port: 3955,
          env: { OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl },
        },
      ]
    : []),
  ...(values.ratio
    ? [
        {
          label: `this code, tracing on, ratio ${values.ratio}`,
          dir: path.resolve('.'),
          port: 3954,
          env: {
            OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
            OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
            OTEL_TRACES_SAMPLER_ARG: values.ratio,
          },
        },
      ]
    : []),
];

/** Each variant books its own 8 venues: venues fill as a run goes on, and each variant fills its own alike. */
async function venuesOf(label: string): Promise<{ venueIds: string[]; key: string }> {
  const org = await createOrganisation(`Bench ${label}`, false);
  const venueIds: string[] = [];
  for (let i = 0; i < 8; i++) {
    const venue = await createVenue(org.id, { name: `Venue ${i}`, timezone: 'Europe/Rome', countryCode: 'IT' });
    await configureDemoVenue(org.id, venue.id);
    venueIds.push(venue.id);
  }
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 });
  return { venueIds, key };
}
const tenants = await Promise.all(variants.map((v) => venuesOf(v.label)));
const servers: ChildProcess[] = await Promise.all(
  // Under npm run profile each variant's server is profiled apart (profiles/<run>/web-<port>/).
  variants.map((v) =>
    spawnServer(path.join(v.dir, 'src/server.ts'), { ...benchServerEnv(), ...v.env }, v.port, profileFlags(`web-${v.port}`)),
  ),
);

const today = instantToLocal('Europe/Rome', Date.now()).date;

interface Phase {
  /** Bookings that succeeded, per second. */
  perSecond: number;
  p50: number;
  /** The server's CPU milliseconds per booking that succeeded (Linux /proc). */
  serverCpu: number;
}

async function book(i: number, duration: number): Promise<Phase> {
  const { venueIds, key } = tenants[i];
  const cpuBefore = processCpuMs(servers[i].pid!);
  const { created, p50 } = await runBookingLoad({
    url: `http://127.0.0.1:${variants[i].port}`,
    targets: venueIds.map((venueId) => ({ venueId, key })),
    connections: 32,
    duration,
    today,
    days: 120,
    times: mealTimes,
  });
  return { perSecond: created / duration, p50, serverCpu: (processCpuMs(servers[i].pid!) - cpuBefore) / created };
}

const { analyzeChangedTables } = await import('../src/services/timers/analyze-tables.js');
try {
  // Warm-up: JIT, pools, key cache, the venues' configuration caches; then the grown tables analysed,
  // as worker-timers does, so that no variant keeps plans made on empty tables.
  for (const i of variants.keys()) await book(i, 3);
  await analyzeChangedTables();
  const figures = variants.map(() => [] as Phase[]);
  for (let round = 0; round < rounds; round++) {
    // Each variant goes first in turn.
    const order = [...variants.keys()].map((_, k) => (k + round) % variants.length);
    for (const i of order) figures[i].push(await book(i, seconds));
  }
  const medians = figures.map((phases) => ({
    perSecond: median(phases.map((p) => p.perSecond)),
    p50: median(phases.map((p) => p.p50)),
    serverCpu: median(phases.map((p) => p.serverCpu)),
  }));
  for (const [i, v] of variants.entries()) {
    console.log(
      `${v.label}: ${medians[i].perSecond.toFixed(0)} bookings/s (median; rounds ${figures[i].map((p) => p.perSecond.toFixed(0)).join(' ')})   p50 ${medians[i].p50} ms   server CPU ${medians[i].serverCpu.toFixed(2)} ms per booking`,
    );
  }
  const change = (a: number, b: number) => `${(((a - b) / b) * 100).toFixed(1)} %`;
  console.log(
    `tracing on vs off: bookings/s ${change(medians[1].perSecond, medians[0].perSecond)}, CPU per booking ${change(medians[1].serverCpu, medians[0].serverCpu)}   (target: at most 15 % slower)`,
  );
  const sampled = variants.findIndex((v) => v.label.includes('ratio'));
  if (sampled >= 0)
    console.log(
      `tracing on, ratio ${values.ratio}, vs off: bookings/s ${change(medians[sampled].perSecond, medians[0].perSecond)}, CPU per booking ${change(medians[sampled].serverCpu, medians[0].serverCpu)}`,
    );
  if (values.code)
    console.log(
      `tracing off vs ${values.code}: bookings/s ${change(medians[0].perSecond, medians[2].perSecond)}, CPU per booking ${change(medians[0].serverCpu, medians[2].serverCpu)}   (target: within noise, 2 %)`,
    );
  const otherOn = variants.findIndex((v) => v.port === 3955);
  if (otherOn >= 0)
    console.log(
      `${values.code}, tracing on vs off: bookings/s ${change(medians[otherOn].perSecond, medians[2].perSecond)}, CPU per booking ${change(medians[otherOn].serverCpu, medians[2].serverCpu)}; this code on vs ${values.code} on: CPU per booking ${change(medians[1].serverCpu, medians[otherOn].serverCpu)}`,
    );
  console.log(`exported to the collector: ${(collector.bytes() / 1e6).toFixed(1)} MB`);
} finally {
  for (const server of servers) server.kill('SIGTERM');
  collector.close();
  await sql.end();
}
