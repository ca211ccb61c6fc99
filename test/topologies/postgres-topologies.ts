// `npm run topologies:postgres`: PostgreSQL beyond one server, against real engines this run starts
// itself from the Debian packages (PostgreSQL cluster, PgBouncer in transaction mode, a streaming
// standby made with pg_basebackup, a redis-server), on free ports, ended by pid. PgBouncer is
// installed by scripts/ensure-pgbouncer.sh when missing; nothing is skipped. Each topology runs under
// booking load with the roles web, worker-events and worker-webhooks as separate processes and a
// webhook receiver on 127.0.0.1: every committed reservation must reach it, every 201 must be stored.
// Prints one line per check and the figures; exits non-zero when a check fails.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { endProcess, startOwnRedis } from '../chaos/own-processes.js';
import { useFileSettings } from '../support/file-settings.js';
import { startOwnPostgres, type OwnPostgres } from '../support/own-postgres.js';
import { freePort } from '../support/free-port.js';
import { openSse } from '../support/sse-client.js';
import * as kit from './postgres-kit.js';

const run = promisify(execFile);
const seconds = Number(process.env.TOPOLOGY_SECONDS ?? 10);
// The steady bookings of each topology, each with its webhook (as npm run topologies does).
const bookingsPerSecond = 5;
const started: ChildProcess[] = [];
const cluster: { primary: OwnPostgres | null } = { primary: null };

function asPostgres(command: string, args: string[]): [string, string[]] {
  return kit.asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

/** PgBouncer in transaction mode in front of `port`, on a free port of its own. */
async function startPgbouncer(targetPort: number, database: string): Promise<{ url: string; child: ChildProcess }> {
  const dir = kit.ownedDir('pgbouncer');
  const port = await freePort();
  writeFileSync(path.join(dir, 'users.txt'), '"postgres" ""\n');
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `${database} = host=127.0.0.1 port=${targetPort} dbname=${database}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      'default_pool_size = 8',
      // The reproduction of the old behaviour (DATABASE_POOLER=none) sends these as start-up
      // parameters, which PgBouncer otherwise refuses; ignored, as an operator would have to.
      'ignore_startup_parameters = extra_float_digits,statement_timeout,idle_in_transaction_session_timeout',
      `logfile = ${path.join(dir, 'log')}`,
    ].join('\n'),
  );
  for (const f of ['users.txt', 'pgbouncer.ini']) kit.giveToPostgres(path.join(dir, f));
  const [command, args] = asPostgres('/usr/sbin/pgbouncer', [path.join(dir, 'pgbouncer.ini')]);
  const child = spawn(command, args, { stdio: 'ignore' });
  started.push(child);
  const url = `postgres://postgres@127.0.0.1:${port}/${database}`;
  await kit.eventually(async () => {
    const probe = postgres(url, { max: 1, prepare: false, onnotice: () => {} });
    try {
      await probe`select 1`;
      return true;
    } finally {
      await probe.end();
    }
  }, 'pgbouncer answers');
  return { url, child };
}

/** A streaming standby of `primaryUrl`'s cluster (pg_basebackup -R), on a free port. */
async function startStandby(primaryPort: number): Promise<{ url: (db: string) => string; stop: () => Promise<void> }> {
  const dir = kit.ownedDir('standby');
  const data = path.join(dir, 'data');
  const port = await freePort();
  const pg = (tool: string, args: string[]) => {
    const [c, a] = asPostgres(path.join(kit.pgBinaries, tool), args);
    return run(c, a);
  };
  await pg('pg_basebackup', [
    '-h',
    '127.0.0.1',
    '-p',
    String(primaryPort),
    '-U',
    'postgres',
    '-D',
    data,
    '-R',
    '-X',
    'stream',
    // Not the default spread checkpoint, which holds the copy for minutes after the migrations.
    '--checkpoint=fast',
    '--no-sync',
  ]);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c hot_standby=on`;
  await pg('pg_ctl', ['-D', data, '-o', options, '-l', path.join(dir, 'log'), '-w', '-t', '30', 'start']);
  return {
    url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`,
    stop: async () => {
      await pg('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {});
    },
  };
}

/** The web role (src/server.ts) in a process of its own with `env`, resolved once it answers. */
async function startWeb(env: Record<string, string>): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: kit.projectRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', METRICS_PORT: '0', ADMIN_PASSWORD: 'topologies', ...env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  started.push(child);
  const url = `http://127.0.0.1:${port}`;
  await kit.eventually(async () => (await fetch(`${url}/readyz`)).status === 200, `web on ${port} ready`, 60_000);
  return { url, child };
}

async function main(): Promise<void> {
  await run('bash', [path.join(kit.projectRoot, 'scripts/ensure-pgbouncer.sh')]);
  await kit.findPostgresUser();
  const primary = (cluster.primary = await startOwnPostgres());
  // A Redis of the run's own: the queues of its roles touch nothing shared.
  const redis = await startOwnRedis();
  const primaryPort = Number(new URL(primary.url).port);
  const database = `floorline_topologies_${randomBytes(3).toString('hex')}`;
  const admin = postgres(primary.url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${database}"`);
  const directUrl = `postgres://postgres@127.0.0.1:${primaryPort}/${database}`;
  const direct = postgres(directUrl, { max: 4, onnotice: () => {} });
  const bouncer = await startPgbouncer(primaryPort, database);
  console.log(`topologies: PostgreSQL of its own on ${primaryPort}, PgBouncer (transaction mode) on ${new URL(bouncer.url).port}`);

  // Two migrations at once through the transaction pooler: both finish, no advisory lock is left.
  const { runMigrations } = await import('../../src/db/migrate.js');
  const migrations = await Promise.allSettled([runMigrations(bouncer.url), runMigrations(bouncer.url)]);
  const [{ locks }] = await direct<{ locks: number }[]>`select count(*)::int as locks from pg_locks where locktype = 'advisory'`;
  kit.check(
    migrations.every((m) => m.status === 'fulfilled') && locks === 0,
    `two concurrent migrations through PgBouncer: ${migrations.map((m) => m.status).join(', ')}; advisory locks left: ${locks}`,
  );

  // The tenant, made directly (this process's own modules on the direct URL).
  useFileSettings({ DATABASE_URL: directUrl });
  const { organisationId, venueIds, key } = await kit.createVenuesTenant('Topologies', 20);
  const { addDays, instantToLocal } = await import('../../src/lib/local-time.js');
  const today = instantToLocal('Europe/Rome', Date.now()).date;
  const queuePrefix = `{topo${randomBytes(3).toString('hex')}}`;
  const base = { QUEUE_PREFIX: queuePrefix, DATABASE_STATEMENT_TIMEOUT_MS: '1500', REDIS_URL: redis.url };
  const world = await import('../chaos/chaos-world.js');
  const { readSteadily, startRoles } = await import('./topology-load.js');
  const destination = await world.startDestination();

  // The defect as reported: PgBouncer in transaction mode with the driver's prepared statements.
  const before = await startWeb({ ...base, DATABASE_URL: bouncer.url, DATABASE_POOLER: 'none' });
  const old = await kit.book(before.url, key, venueIds, today, Math.min(seconds, 5));
  const oldStored = await kit.storedCount(direct, old.created);
  console.log(
    `info reproduction, DATABASE_POOLER=none through PgBouncer (prepared statements): ${old.created.length} × 201, ${old.created.length - oldStored} of them not in the database; ${old.fiveHundreds} × 5xx (${old.statuses})`,
  );
  const [{ stuck }] = await direct<
    { stuck: number }[]
  >`select count(*)::int as stuck from pg_stat_activity where datname = ${database} and state = 'idle in transaction (aborted)'`;
  console.log(`info   server connections then left idle in an aborted transaction: ${stuck}`);
  await endProcess(before.child, 'SIGKILL');

  // Through PgBouncer with DATABASE_POOLER=transaction, under load with webhooks: web, worker-events
  // and worker-webhooks as processes of their own, every venue's reservation_created sent to the
  // receiver; bookings at a steady rate on a venue of their own, and c=16 across the 20 venues.
  const pooledRoles = await startRoles(bouncer.url, { ...base, DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: directUrl });
  const pooled = { url: pooledRoles[0].url!, child: pooledRoles[0].child };
  const steadyTenant = await world.createChaosTenant();
  await world.routeBookingsTo(pooled.url, steadyTenant, destination.url);
  for (const venueId of venueIds) await world.routeBookingsTo(pooled.url, { organisationId, venueId, key }, destination.url);
  const pooledSince = await kit.clockOf(direct);
  const pooledReceivedBefore = destination.received.length;
  const stream = await openSse(`${pooled.url}/api/v1/events/stream?venueId=${venueIds[0]}`, key);
  const pooledWrites = new world.Tally();
  let steadyDone = false;
  const pooledLoadFrom = Date.now();
  const steady = world.bookSteadily(pooled.url, steadyTenant, bookingsPerSecond, () => steadyDone, pooledWrites);
  await kit.sleep(2000);
  const through = await kit.book(pooled.url, key, venueIds, today, seconds);
  await kit.sleep(2000);
  steadyDone = true;
  await steady;
  const pooledLoadMs = Date.now() - pooledLoadFrom;
  const throughStored = await kit.storedCount(direct, through.created);
  kit.check(
    throughStored === through.created.length && through.fiveHundreds === 0 && through.errors === 0,
    `c=16 through PgBouncer (DATABASE_POOLER=transaction): ${through.created.length} × 201, ${throughStored} stored (SQL), ${through.fiveHundreds} × 5xx (${through.statuses})`,
  );
  const onVenue0 = (
    await direct<{ id: string }[]>`select id from reservations where id = any(${through.created}::uuid[]) and venue_id = ${venueIds[0]}`
  ).map((row) => row.id);
  // Each booking of that venue as its own reservation_created frame (the stream carries the venue's
  // other events too: a count of frames would pass with one missing).
  const streamed = () =>
    onVenue0.filter((id) => stream.events().some((frame) => frame.event === 'reservation_created' && frame.data?.includes(id))).length;
  await stream.waitFor(() => streamed() === onVenue0.length, 30_000).catch(() => {});
  const delivered = streamed();
  stream.close();
  kit.check(
    delivered === onVenue0.length && onVenue0.length > 0,
    `live stream through DATABASE_DIRECT_URL: ${delivered} of the ${onVenue0.length} bookings of its venue delivered as reservation_created`,
  );
  const pooledSteady = await kit.describeWrites(direct, pooledWrites);
  kit.check(
    pooledSteady.failed === 0 && pooledSteady.notStored === 0,
    `steady ${bookingsPerSecond}/s through PgBouncer beside the c=16 load: ${pooledSteady.line}`,
  );
  const pooledHooks = await kit.awaitReservationWebhooks(direct, destination, [steadyTenant.venueId, ...venueIds], pooledSince);
  kit.check(
    pooledHooks.missing === 0,
    `webhooks through PgBouncer: ${pooledHooks.reservations} reservations committed during ${(pooledLoadMs / 1000).toFixed(1)} s of load (SQL), ${pooledHooks.missing} without their reservation_created webhook at the receiver ` +
      `(${(pooledHooks.waitedMs / 1000).toFixed(1)} s after the load); ${destination.received.length - pooledReceivedBefore} deliveries received, ${destination.duplicates()} duplicates`,
  );
  kit.check(
    !kit.exitedRoles(pooledRoles).length,
    `web, worker-events, worker-webhooks through PgBouncer, none restarted: exited ${kit.exitedRoles(pooledRoles).join(', ') || 'none'}`,
  );

  // The statement timeout in force: a booking waiting on a lock this run holds answers 503 in time.
  const holder = await direct.reserve();
  await holder`begin`;
  await holder`select id from venues where id = ${venueIds[1]} for update`;
  const t0 = Date.now();
  const timed = await fetch(`${pooled.url}/api/v1/reservations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ venueId: venueIds[1], serviceDate: addDays(today, 3), time: '19:00', partySize: 2 }),
  });
  const waited = Date.now() - t0;
  const body = (await timed.json()) as { error?: { details?: { reason?: string } } };
  await holder`rollback`;
  holder.release();
  kit.check(
    timed.status === 503 && body.error?.details?.reason === 'statement_timeout' && waited < 10_000,
    `statement timeout through PgBouncer: ${timed.status} ${body.error?.details?.reason} after ${waited} ms (limit 1500 ms)`,
  );
  const [{ aborted }] = await direct<
    { aborted: number }[]
  >`select count(*)::int as aborted from pg_stat_activity where datname = ${database} and state like 'idle in transaction%'`;
  kit.check(aborted === 0, `no server connection left idle in a transaction: ${aborted}`);

  // The side-by-side comparison below without webhook work, as before.
  for (const worker of pooledRoles.slice(1)) await endProcess(worker.child, 'SIGTERM', 5000);
  const directWeb = await startWeb({ ...base, DATABASE_URL: directUrl });
  const straight = await kit.book(directWeb.url, key, venueIds, today, seconds);
  const again = await kit.book(pooled.url, key, venueIds, today, seconds);
  console.log(
    `info bookings/s at c=16, one run: direct ${straight.perSecond.toFixed(0)}, through PgBouncer (transaction) ${again.perSecond.toFixed(0)}; through PgBouncer beside the steady bookings and the webhook workers ${through.perSecond.toFixed(0)}`,
  );
  kit.check(
    again.fiveHundreds === 0 && (await kit.storedCount(direct, again.created)) === again.created.length,
    'second pooled run: every 201 stored, 0 × 5xx',
  );
  await endProcess(directWeb.child, 'SIGKILL');

  // SIGTERM ends the pooled process within its drain limit even while PostgreSQL does not answer.
  const stopped = await startWeb({ ...base, DATABASE_URL: bouncer.url, DATABASE_POOLER: 'transaction', DATABASE_DIRECT_URL: directUrl });
  const [c, a] = asPostgres('kill', ['-STOP', ...(await clusterPids(direct)).map(String)]);
  const inFlight = kit.book(stopped.url, key, venueIds, today, 2, 4).catch(() => null);
  await new Promise((resolve) => setTimeout(resolve, 500));
  await run(c, a);
  const r0 = Date.now();
  const ready = await fetch(`${stopped.url}/readyz`).then(
    async (res) => `${res.status} ${((await res.json()) as { database?: string }).database}`,
    (err: Error) => err.message,
  );
  kit.check(ready === '503 unreachable', `/readyz while PostgreSQL behind PgBouncer does not answer: ${ready} after ${Date.now() - r0} ms`);
  const s0 = Date.now();
  let exitCode: number | null = null;
  const exited = new Promise((resolve) => stopped.child.once('exit', (code) => resolve((exitCode = code))));
  process.kill(stopped.child.pid!, 'SIGTERM');
  const stopMs = await Promise.race([
    exited.then(() => Date.now() - s0),
    new Promise<number>((resolve) => setTimeout(() => resolve(-1), 30_000)),
  ]);
  const [cc, ca] = asPostgres('kill', ['-CONT', ...frozenPids.map(String)]);
  await run(cc, ca);
  await inFlight;
  kit.check(
    stopMs >= 0 && exitCode === 0,
    `SIGTERM with every PostgreSQL process frozen (SIGSTOP): exited after ${stopMs} ms with code ${exitCode}`,
  );
  await endProcess(stopped.child, 'SIGKILL');
  await endProcess(pooled.child, 'SIGKILL');

  // The streaming standby under load with webhooks: reads that tolerate lag go there, and to the
  // primary when it lags or is down; it falls behind (replay paused), then is stopped, while bookings
  // go on. Queues of their own (the bookings above left events in theirs).
  const replicaBase = { ...base, QUEUE_PREFIX: `{topo${randomBytes(3).toString('hex')}}` };
  const standby = await startStandby(primaryPort);
  const replicaUrl = standby.url(database);
  await kit.eventually(async () => {
    const probe = postgres(replicaUrl, { max: 1, onnotice: () => {} });
    try {
      return (await probe<{ r: boolean }[]>`select pg_is_in_recovery() as r`)[0].r;
    } finally {
      await probe.end();
    }
  }, 'standby in recovery');
  const patient = await startWeb({
    ...replicaBase,
    DATABASE_URL: directUrl,
    DATABASE_READ_URL: replicaUrl,
    DATABASE_READ_MAX_LAG_MS: '600000',
  });
  const reportOf = async (url: string, day: string) => {
    const res = await fetch(`${url}/api/v1/reports/summary?venueId=${venueIds[2]}&from=${day}&to=${day}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return ((await res.json()) as { totals: { reservations: number } }).totals.reservations;
  };

  // Read capacity first, while nothing else runs (the roles below start afterwards).
  const reportReads = async (url: string) =>
    (
      await autocannon({
        url,
        connections: 16,
        duration: seconds,
        headers: { authorization: `Bearer ${key}` },
        requests: [
          { method: 'GET', path: `/api/v1/reports/summary?venueId=${venueIds[0]}&from=${addDays(today, 1)}&to=${addDays(today, 31)}` },
        ],
      })
    ).requests.average;
  const withReplica = await reportReads(patient.url);
  const withoutWeb = await startWeb({ ...replicaBase, DATABASE_URL: directUrl });
  const withoutReplica = await reportReads(withoutWeb.url);
  await endProcess(withoutWeb.child, 'SIGKILL');
  console.log(
    `info GET /reports/summary (31 days) req/s at c=16, one run: primary only ${withoutReplica.toFixed(0)}, with the replica ${withReplica.toFixed(0)} (same machine: the replica adds capacity only on a machine of its own)`,
  );

  const replicaRoles = await startRoles(directUrl, { ...replicaBase, DATABASE_READ_URL: replicaUrl, DATABASE_READ_MAX_LAG_MS: '1000' });
  const strict = { url: replicaRoles[0].url!, metricsUrl: replicaRoles[0].metricsUrl };
  const replicaTenant = await world.createChaosTenant();
  await world.routeBookingsTo(strict.url, replicaTenant, destination.url);
  const replicaSince = await kit.clockOf(direct);
  const replicaReceivedBefore = destination.received.length;
  const replicaWrites = new world.Tally();
  const replicaReads = new world.Tally();
  let loadDone = false;
  const replicaLoadFrom = Date.now();
  const load = Promise.all([
    world.bookSteadily(strict.url, replicaTenant, bookingsPerSecond, () => loadDone, replicaWrites),
    readSteadily(strict.url, replicaTenant, () => loadDone, replicaReads),
  ]);
  await kit.sleep(3000);
  const day = addDays(today, 40);
  const replica = postgres(replicaUrl, { max: 1, onnotice: () => {} });
  await replica`select pg_wal_replay_pause()`;
  const pausedAt = Date.now();
  const booked = await fetch(`${patient.url}/api/v1/reservations`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ venueId: venueIds[2], serviceDate: day, time: '19:00', partySize: 2 }),
  });
  const patientSees = await reportOf(patient.url, day);
  const strictSees = await kit.eventually(
    async () => (await reportOf(strict.url, day)) === 1 && 1,
    'the lagging replica left for the primary',
  );
  kit.check(
    booked.status === 201 && patientSees === 0 && strictSees === 1,
    `replica, replay paused: report within the lag limit reads the replica (${patientSees} of 1); past 1 s of lag it reads the primary (${strictSees} of 1)`,
  );
  const gauge = await kit.eventually(async () => {
    const text = await (await fetch(strict.metricsUrl)).text();
    const value = Number(/^database_replica_lag_seconds (\S+)$/m.exec(text)?.[1]);
    return value > 1 && value;
  }, 'the lag gauge past 1 s');
  kit.check(gauge > 1, `database_replica_lag_seconds on /metrics while replay is paused: ${gauge}`);
  await kit.sleep(Math.max(0, 5000 - (Date.now() - pausedAt)));
  await replica`select pg_wal_replay_resume()`;
  await replica.end();
  const behindMs = Date.now() - pausedAt;
  await kit.sleep(2000);
  await standby.stop();
  const stoppedAt = Date.now();
  const downStatus = await kit.eventually(async () => {
    const res = await fetch(`${patient.url}/api/v1/reports/summary?venueId=${venueIds[2]}&from=${day}&to=${day}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return res.status === 200 && res.status;
  }, 'report with the replica down');
  kit.check(downStatus === 200, `replica down: reports answered from the primary (${downStatus})`);
  await kit.sleep(Math.max(0, 5000 - (Date.now() - stoppedAt)));
  loadDone = true;
  await load;
  const replicaLoadMs = Date.now() - replicaLoadFrom;
  const replicaSteady = await kit.describeWrites(direct, replicaWrites);
  kit.check(
    replicaSteady.failed === 0 && replicaSteady.notStored === 0,
    `steady ${bookingsPerSecond}/s with the standby ${(behindMs / 1000).toFixed(1)} s behind (replay paused), then stopped for the last ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s: ${replicaSteady.line}`,
  );
  kit.check(
    replicaReads.answers.length > 0 && replicaReads.count((status) => status !== 200) === 0,
    `reads that tolerate lag meanwhile (31-day report, GET /events): ${replicaReads.answers.length} (${replicaReads.statuses()})`,
  );
  const replicaHooks = await kit.awaitReservationWebhooks(direct, destination, [replicaTenant.venueId, venueIds[2]], replicaSince);
  kit.check(
    replicaHooks.missing === 0,
    `webhooks with the standby behind, then stopped: ${replicaHooks.reservations} reservations committed during ${(replicaLoadMs / 1000).toFixed(1)} s of load (SQL), ${replicaHooks.missing} without their reservation_created webhook at the receiver ` +
      `(${(replicaHooks.waitedMs / 1000).toFixed(1)} s after the load); ${destination.received.length - replicaReceivedBefore} deliveries received`,
  );
  kit.check(
    !kit.exitedRoles(replicaRoles).length,
    `web, worker-events, worker-webhooks beside the standby, none restarted: exited ${kit.exitedRoles(replicaRoles).join(', ') || 'none'}`,
  );
  await destination.close();
  await direct.end();
  await admin.end();
}

/** Every process of the run's own cluster (postmaster, backends, background workers): frozen, PostgreSQL hangs. */
let frozenPids: number[] = [];
async function clusterPids(sql: postgres.Sql): Promise<number[]> {
  const [{ dir }] = await sql<{ dir: string }[]>`select setting as dir from pg_settings where name = 'data_directory'`;
  const { stdout } = await run('head', ['-1', path.join(dir, 'postmaster.pid')]);
  const backends = await sql<{ pid: number }[]>`select pid from pg_stat_activity`;
  frozenPids = [Number(stdout.trim()), ...backends.map((b) => b.pid)];
  return frozenPids;
}

await kit.runTopologyScript('topologies:postgres', main, {
  before: async () => {
    if (frozenPids.length) await run('kill', ['-CONT', ...frozenPids.map(String)]).catch(() => {});
    for (const child of started) await endProcess(child, 'SIGTERM', 5000);
  },
  after: async () => {
    await cluster.primary?.destroy();
  },
});
