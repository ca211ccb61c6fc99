// Writes of one organisation never queue behind each other (issue 24): bookings that succeed, spread
// over 12 venues of ONE organisation vs 12 venues of 12 organisations, 32 connections, against one
// server, in alternating rounds (medians), with the CPU per booking of the server and of PostgreSQL.
// Target: one organisation / twelve >= 0.9.
// Usage: npx tsx bench/organisation-writes.ts [seconds=8] [rounds=3] [--code DIR] [--cpu-prof DIR]
//   --code DIR also serves the same database with another checkout (e.g. a worktree of the code
//   before the live stream, its node_modules linked), measured in the same alternating rounds.
//   --cpu-prof DIR writes a CPU profile of each server into DIR when it stops (open in Chrome's DevTools).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prepareBenchDatabase } from './support/bench-database.js';
import { mealTimes, runBookingLoad } from './support/booking-load.js';
import { cpuUsedSince, postgresCpuSnapshot, processCpuMs } from './support/process-cpu.js';
import { spawnServer } from './support/spawn-server.js';
import { median } from './support/statistics.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { code: { type: 'string' }, 'cpu-prof': { type: 'string' } },
});
const seconds = Number(positionals[0] ?? 8);
const rounds = Number(positionals[1] ?? 3);
await prepareBenchDatabase('floorline_bench_organisation_writes');
const { createApiKey, createOrganisation } = await import('../src/services/keys/key-service.js');
const { createVenue } = await import('../src/services/venues/venue-service.js');
const { configureDemoVenue } = await import('../src/services/venue-config/demo-venue.js');
const { instantToLocal } = await import('../src/lib/local-time.js');
const sql = (await import('../src/db/client.js')).pool();

interface Tenant {
  venueId: string;
  key: string;
}

async function venueOf(organisationId: string, name: string): Promise<string> {
  const venue = await createVenue(organisationId, { name, timezone: 'Europe/Rome', countryCode: 'IT' });
  await configureDemoVenue(organisationId, venue.id);
  return venue.id;
}
const benchKey = async (organisationId: string) =>
  (await createApiKey({ organisationId, kind: 'live', name: 'bench', rateLimitPerMinute: 100_000_000 })).key;

/** 12 venues of one organisation and 12 venues of 12 organisations. */
async function createTenants(label: string): Promise<{ one: Tenant[]; twelve: Tenant[] }> {
  const group = await createOrganisation(`Group ${label}`, false);
  const groupKey = await benchKey(group.id);
  const one: Tenant[] = [];
  for (let i = 0; i < 12; i++) one.push({ venueId: await venueOf(group.id, `Group venue ${i}`), key: groupKey });
  const twelve: Tenant[] = [];
  for (let i = 0; i < 12; i++) {
    const org = await createOrganisation(`Independent ${label} ${i}`, false);
    twelve.push({ venueId: await venueOf(org.id, `Independent ${i}`), key: await benchKey(org.id) });
  }
  return { one, twelve };
}

// No metrics listener: two servers of this code would both take its port.
const serverEnv = {
  DATABASE_URL: process.env.DATABASE_URL!,
  QUEUE_PREFIX: process.env.QUEUE_PREFIX!,
  LOG_LEVEL: 'warn',
  ADMIN_PASSWORD: 'bench',
  METRICS_PORT: '0',
};
const codes = [{ label: 'this code', dir: path.resolve('.'), port: 3946 }];
if (values.code) codes.push({ label: values.code, dir: path.resolve(values.code), port: 3947 });
// Each code books its own venues: venues fill as a run goes on (fewer bookings succeed), so codes
// sharing venues would be measured on unequal days.
const tenants = await Promise.all(codes.map((code) => createTenants(code.label)));
const profile = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values['cpu-prof'])}`] : undefined;
const started = await Promise.allSettled(
  codes.map((code) => spawnServer(path.join(code.dir, 'src/server.ts'), serverEnv, code.port, profile)),
);
const servers = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
if (servers.length < codes.length) {
  for (const server of servers) server.kill('SIGTERM');
  throw (started.find((s) => s.status === 'rejected') as PromiseRejectedResult).reason;
}
const today = instantToLocal('Europe/Rome', Date.now()).date;

interface Phase {
  /** Bookings that succeeded, per second. */
  perSecond: number;
  /** CPU milliseconds per booking that succeeded: the server's, and PostgreSQL's backends' (Linux /proc). */
  serverCpu: number;
  postgresCpu: number;
}

/** Bookings that succeeded over `tenants`, each request on a random venue, day (1–60 days ahead) and time. */
async function book(port: number, server: ChildProcess, tenants: Tenant[]): Promise<Phase> {
  const [serverBefore, postgresBefore] = [processCpuMs(server.pid!), await postgresCpuSnapshot(sql)];
  const { created } = await runBookingLoad({
    url: `http://127.0.0.1:${port}`,
    targets: tenants,
    connections: 32,
    duration: seconds,
    today,
    days: 60,
    times: mealTimes,
  });
  return {
    perSecond: created / seconds,
    serverCpu: (processCpuMs(server.pid!) - serverBefore) / created,
    postgresCpu: cpuUsedSince(postgresBefore, await postgresCpuSnapshot(sql)) / created,
  };
}

// What worker-timers does for a deployment every minute on a server without autovacuum (this
// machine's): analyse the tables the bookings grow, so that the servers' prepared statements are
// replanned for their size (docs/operations.md "Timers"). Without it each code kept the plans it made
// on its first bookings: the code whose warm-up came first read whole venues' reservations per booking.
const { analyzeChangedTables } = await import('../src/services/timers/analyze-tables.js');
const { timerSchedules } = await import('../src/jobs/timer-job.js');
const analyzing = setInterval(
  () => void analyzeChangedTables().catch(() => {}),
  timerSchedules.find((s) => s.task === 'analyze-tables')!.every,
);

try {
  // Warm-up: JIT, pools, key cache, the venues' configuration caches.
  for (const [i, code] of codes.entries()) await book(code.port, servers[i], [...tenants[i].one, ...tenants[i].twelve]);
  const figures = codes.map(() => ({ one: [] as Phase[], twelve: [] as Phase[] }));
  for (let round = 0; round < rounds; round++) {
    // Each code goes first in every other round.
    for (const [i, code] of round % 2 ? [...codes.entries()].reverse() : codes.entries()) {
      figures[i].one.push(await book(code.port, servers[i], tenants[i].one));
      figures[i].twelve.push(await book(code.port, servers[i], tenants[i].twelve));
    }
  }
  const rates = (phases: Phase[]) => phases.map((p) => p.perSecond.toFixed(0)).join(' ');
  const cpu = (phases: Phase[]) =>
    `server ${median(phases.map((p) => p.serverCpu)).toFixed(2)} ms, PostgreSQL ${median(phases.map((p) => p.postgresCpu)).toFixed(2)} ms`;
  for (const [i, code] of codes.entries()) {
    const { one, twelve } = figures[i];
    const [oneRate, twelveRate] = [median(one.map((p) => p.perSecond)), median(twelve.map((p) => p.perSecond))];
    console.log(`${code.label}: rounds, bookings/s: one organisation ${rates(one)}; twelve organisations ${rates(twelve)}`);
    console.log(`  12 venues of one organisation:   ${oneRate.toFixed(0)} bookings/s (median); CPU per booking: ${cpu(one)}`);
    console.log(`  12 venues of 12 organisations:   ${twelveRate.toFixed(0)} bookings/s (median); CPU per booking: ${cpu(twelve)}`);
    console.log(`  ratio one/twelve: ${(oneRate / twelveRate).toFixed(2)} (target >= 0.9)`);
  }
  const [{ doubles }] = await sql`
    select count(*)::int as doubles from reservation_tables a
    join reservation_tables b on a.table_id = b.table_id and a.reservation_id < b.reservation_id
    where a.live and b.live and a.during && b.during`;
  // Counted once the stream's second has passed: the last commits are numbered just after them.
  // Only this code's venues: the code before the stream (--code 67f2256) numbers nothing.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const ownVenues = [...tenants[0].one, ...tenants[0].twelve].map((t) => t.venueId);
  const [{ unnumbered }] = await sql`
    select count(*)::int as unnumbered from unsequenced_events u join events e on e.id = u.event_id
    where e.venue_id = any(${ownVenues}::uuid[])`;
  console.log(`double bookings: ${doubles}   published events without a stream position after the run: ${unnumbered}`);
} finally {
  clearInterval(analyzing);
  for (const server of servers) server.kill('SIGTERM');
  await Promise.all(
    servers.map((server) => new Promise((resolve) => (server.exitCode === null ? server.once('exit', resolve) : resolve(null)))),
  );
  await sql.end();
}
