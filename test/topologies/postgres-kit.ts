// What the PostgreSQL topology runs share (npm run topologies:postgres: postgres-topologies.ts and
// patroni-failover.ts): their checks, booking load and the figures read back from PostgreSQL.
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type postgres from 'postgres';
import type { Destination, Tally } from '../chaos/chaos-world.js';
import { endAll, isRunning, type RoleProcess } from '../chaos/own-processes.js';
import { runBookingLoad, type BookingLoad } from '../../bench/support/booking-load.js';

export const projectRoot = path.resolve(import.meta.dirname, '../..');
/** The Debian PostgreSQL binaries (initdb, pg_ctl, pg_basebackup). */
export const pgBinaries = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
/** As root, PostgreSQL and what runs it are started as the `postgres` user. */
export const asRoot = process.getuid?.() === 0;
const ownedDirs: string[] = [];
const postgresUser = { uid: 0, gid: 0 };

/** As root, reads the `postgres` user's ids (PostgreSQL, PgBouncer and Patroni refuse to run as root): before ownedDir. */
export async function findPostgresUser(): Promise<void> {
  if (!asRoot) return;
  const run = promisify(execFile);
  postgresUser.uid = Number((await run('id', ['-u', 'postgres'])).stdout.trim());
  postgresUser.gid = Number((await run('id', ['-g', 'postgres'])).stdout.trim());
}

/** As root, gives `file` to the `postgres` user. */
export function giveToPostgres(file: string): void {
  if (asRoot) chownSync(file, postgresUser.uid, postgresUser.gid);
}

/** A temporary directory the `postgres` user may use, removed by removeOwnedDirs. */
export function ownedDir(prefix: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), `floorline-topo-${prefix}-`));
  ownedDirs.push(dir);
  giveToPostgres(dir);
  return dir;
}

export function removeOwnedDirs(): void {
  for (const dir of ownedDirs) rmSync(dir, { recursive: true, force: true });
}

/** Checks failed so far in this run (the script's exit status). */
export const checks = { failures: 0 };

export function check(ok: boolean, what: string): void {
  if (!ok) checks.failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

/**
 * Runs a topology script: `main`, whose throw counts as a failed check; then, whatever happened,
 * `ending.before`, every process started through own-processes.ts (SIGKILL), `ending.after` and the
 * owned directories; prints the summary line (`label`, the checks, the time taken) and exits
 * non-zero when a check failed.
 */
export async function runTopologyScript(
  label: string,
  main: () => Promise<void>,
  ending: { before?: () => Promise<void>; after?: () => Promise<void> },
): Promise<never> {
  const started = Date.now();
  try {
    await main();
  } catch (err) {
    checks.failures++;
    console.error('FAIL', err);
  } finally {
    await ending.before?.();
    await endAll();
    await ending.after?.();
    removeOwnedDirs();
  }
  const took = Math.round((Date.now() - started) / 1000);
  console.log(
    `${label}: ${checks.failures ? `${checks.failures} check(s) failed` : 'all checks passed'} in ${Math.floor(took / 60)} min ${took % 60} s`,
  );
  process.exit(checks.failures ? 1 : 0);
}

export async function eventually<T>(probe: () => Promise<T | undefined | false>, what: string, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Bookings at `connections` for `duration` s; the ids of the 201s and the count of 5xx. */
export async function book(
  url: string,
  key: string,
  venueIds: string[],
  today: string,
  duration: number,
  connections = 16,
  options: Pick<BookingLoad, 'idempotent' | 'onAnswer'> = {},
) {
  const times = ['19:00', '19:15', '19:30', '19:45', '20:00', '20:15', '20:30', '20:45', '21:00', '12:00', '12:30', '13:00'];
  const load = await runBookingLoad({
    url,
    targets: venueIds.map((venueId) => ({ venueId, key })),
    connections,
    duration,
    today,
    days: 30,
    times,
    keepIds: true,
    ...options,
  });
  const counts = Object.entries(load.statusCounts);
  return {
    created: load.ids,
    fiveHundreds: counts.filter(([code]) => code.startsWith('5')).reduce((sum, [, count]) => sum + count, 0),
    statusCounts: load.statusCounts,
    perSecond: load.ids.length / duration,
    errors: load.errors,
    statuses: counts.map(([c, count]) => `${c}×${count}`).join(' '),
  };
}

export async function storedCount(sql: postgres.Sql, ids: string[]): Promise<number> {
  if (!ids.length) return 0;
  const [{ count }] = await sql<{ count: number }[]>`select count(*)::int as count from reservations where id = any(${ids}::uuid[])`;
  return count;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** PostgreSQL's clock, which stamps the reservations. */
export async function clockOf(sql: postgres.Sql): Promise<string> {
  const [{ now }] = await sql<{ now: string }[]>`select clock_timestamp()::text as now`;
  return now;
}

/**
 * Every reservation of `venueIds` committed since `since`, as PostgreSQL has it, against the
 * reservation_created webhooks `destination` received: waits (at most `limitMs`) until each has
 * its webhook; a reservation without a reservation_created event counts as missing too.
 */
export async function awaitReservationWebhooks(
  sql: postgres.Sql,
  destination: Destination,
  venueIds: string[],
  since: string,
  limitMs = 60_000,
): Promise<{ reservations: number; missing: number; waitedMs: number }> {
  const began = Date.now();
  const received = new Set<string>();
  let seen = 0;
  for (;;) {
    for (; seen < destination.received.length; seen++) received.add(destination.received[seen].eventId);
    const rows = await sql<{ event: string | null }[]>`
      select e.id::text as event from reservations r
      left join events e on e.subject_id = r.id and e.type = 'reservation_created'
      where r.venue_id = any(${venueIds}::uuid[]) and r.created_at >= ${since}::timestamptz`;
    const missing = rows.filter((r) => !r.event || !received.has(r.event)).length;
    if (!missing || Date.now() - began > limitMs) return { reservations: rows.length, missing, waitedMs: Date.now() - began };
    await sleep(500);
  }
}

/** The steady writes of a scenario: how many were answered, how, and how many 201s are not in the database. */
export async function describeWrites(sql: postgres.Sql, tally: Tally): Promise<{ line: string; failed: number; notStored: number }> {
  const ids = tally.answers.filter((a) => a.status === 201).map((a) => (a.body as { reservation: { id: string } }).reservation.id);
  const notStored = ids.length - (await storedCount(sql, ids));
  const failed = tally.answers.length - ids.length;
  return {
    line: `${tally.answers.length} bookings (${tally.statuses()}), ${notStored} of the 201s not in the database (SQL)`,
    failed,
    notStored,
  };
}

export const exitedRoles = (roles: RoleProcess[]) => roles.filter((p) => !isRunning(p.child)).map((p) => p.role);

/**
 * An organisation with `venues` demo venues and a live key without a practical rate limit, made by
 * this process's own modules (on DATABASE_URL: set it before the first call).
 */
export async function createVenuesTenant(
  name: string,
  venues: number,
): Promise<{ organisationId: string; venueIds: string[]; key: string }> {
  const { createApiKey, createOrganisation } = await import('../../src/services/keys/key-service.js');
  const { createVenue } = await import('../../src/services/venues/venue-service.js');
  const { configureDemoVenue } = await import('../../src/services/venue-config/demo-venue.js');
  const org = await createOrganisation(name, false);
  const venueIds: string[] = [];
  for (let i = 0; i < venues; i++) {
    const venue = await createVenue(org.id, { name: `${name} ${i}`, timezone: 'Europe/Rome', countryCode: 'IT' });
    await configureDemoVenue(org.id, venue.id);
    venueIds.push(venue.id);
  }
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name, rateLimitPerMinute: 100_000_000 });
  return { organisationId: org.id, venueIds, key };
}
