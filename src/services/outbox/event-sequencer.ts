import { setTimeout as sleep } from 'node:timers/promises';
import { lt, max, eq, sql } from 'drizzle-orm';
import { db, pool } from '../../db/client.js';
import { eventPositions, unsequencedEvents } from '../../db/schema/index.js';
import { logger } from '../../logger.js';

/** The channel of the notifications the web processes' event streams listen to (one per run that numbered events). */
export const eventStreamChannel = 'events_committed';

/** Events numbered by one run at most: a run stays short, a backlog takes several. */
const runSize = 5000;

/**
 * Gives stream positions (GET /events/stream) to an organisation's committed, published events that
 * have none (those in `unsequenced_events`), in (createdAt, id) order, and notifies the streams.
 * Writers never wait for it: their transactions commit side by side, and positions are given after
 * commit, one run at a time per organisation. A run adds narrow rows to `event_positions` and never
 * rewrites an event row.
 *
 * Why a reader never misses an event: a run takes the organisation's lock with a try (a writer never
 * queues behind another's numbering) and numbers in a statement of its own, whose snapshot is taken
 * once the lock is held, so it sees every earlier run's positions and continues after them; a run's
 * positions become visible together at its commit, and the next run starts after that commit. A
 * reader that sees position N has therefore seen every position below it. A call that finds the lock
 * taken leaves its events to the run holding it: that run looks again after its commit, when the
 * events committed before the call are visible to it.
 *
 * Returns false when another run held the lock.
 */
export async function sequenceEvents(organisationId: string): Promise<boolean> {
  return !(await sequenceEventsOf([organisationId])).length;
}

/**
 * sequenceEvents for many organisations (the outbox sweeper's, after a process died with commits
 * unnumbered), up to organisationsPerRun of them in one transaction per run. Returns those whose lock
 * another run held: that run numbers their events.
 */
export async function sequenceEventsOf(organisationIds: Iterable<string>): Promise<string[]> {
  const busy: string[] = [];
  for (let left = [...new Set(organisationIds)]; left.length;) {
    const run = await numberOrganisations(left.slice(0, organisationsPerRun));
    busy.push(...run.busy);
    left = [...left.slice(organisationsPerRun), ...run.more, ...(await withUnsequenced(run.numbered))];
  }
  return busy;
}

/**
 * One transaction that numbers several organisations' events: each organisation's try-lock first
 * (pipelined), then the numbering statement of each whose lock was taken, so that each statement's
 * snapshot is taken with its organisation's lock held, as the proof above needs. Many organisations
 * with a few commits each are numbered by one transaction, not one each.
 */
async function numberOrganisations(organisationIds: string[]): Promise<{ busy: string[]; more: string[]; numbered: string[] }> {
  return pool().begin(async (tx) => {
    const locks = await Promise.all(
      organisationIds.map((id) => tx.unsafe<Array<{ ok: boolean }>>(takeLockStatement, [id], { prepare: true }).then(([lock]) => lock.ok)),
    );
    const held = organisationIds.filter((_, i) => locks[i]);
    const runs = await Promise.all(
      held.map((id) =>
        tx
          .unsafe<Array<{ numbered: number }>>(numberStatement, [id, runSize, eventStreamChannel], { prepare: true })
          .then(([run]) => run.numbered),
      ),
    );
    return {
      busy: organisationIds.filter((_, i) => !locks[i]),
      more: held.filter((_, i) => runs[i] === runSize),
      numbered: held.filter((_, i) => runs[i] < runSize),
    };
  });
}

// A run's statements go to the driver as prepared statements (planned once per connection): a run
// follows nearly every commit, and planning the numbering statement each time cost PostgreSQL about
// as much as running it (docs/architecture.md "Write path"). $1 is the organisation. The numbering
// statement notifies the streams ($3: the channel) when it numbered events: delivered at commit, when
// the positions are visible.
const takeLockStatement = `select pg_try_advisory_xact_lock(hashtext('event-sequencer'), hashtext($1)) as ok`;
const numberStatement = `
  with head as (
    select coalesce(
      (select position from event_stream_heads where organisation_id = $1),
      (select max(position) from event_positions where organisation_id = $1),
      0) as position
  ), taken as (
    delete from unsequenced_events u
    using (select created_at, event_id from unsequenced_events where organisation_id = $1 order by created_at, event_id limit $2) oldest
    where u.organisation_id = $1 and u.created_at = oldest.created_at and u.event_id = oldest.event_id
    returning u.created_at, u.event_id
  ), numbered as (
    insert into event_positions (organisation_id, position, event_id)
    select $1, (select position from head) + row_number() over (order by created_at, event_id), event_id from taken
    returning position
  ), moved as (
    insert into event_stream_heads (organisation_id, position)
    select $1, max(position) from numbered having count(*) > 0
    on conflict (organisation_id) do update set position = excluded.position
  )
  select count(*)::int as numbered, case when count(*) > 0 then pg_notify($3::text, $1::text) end as notified from numbered`;
/** Of these organisations, those with events still to number. */
async function withUnsequenced(organisationIds: string[]): Promise<string[]> {
  if (!organisationIds.length) return [];
  const rows = await pool().unsafe<Array<{ organisationId: string }>>(
    `select o.id as "organisationId" from unnest($1::uuid[]) o(id)
      where exists (select 1 from unsequenced_events u where u.organisation_id = o.id)`,
    [organisationIds] as never[],
    { prepare: true },
  );
  return rows.map((r) => r.organisationId);
}

/** Failed runs in a row (PostgreSQL unreachable, a statement cancelled) before the numbering of what is pending is left to the next commit or the sweeper. */
const maxFailures = 5;

/**
 * A run follows the previous run of this process by at least this long: under load commits follow
 * each other closely, and a run per commit cost PostgreSQL a transaction (and a WAL flush) each; what
 * commits meanwhile is numbered together, well within the stream's second (docs/architecture.md
 * "Write path"). After a quiet moment (no run started for this long) a run starts at once.
 */
const runSpacingMs = 50;
/** When this process's last run started (performance.now()): a new loop keeps the spacing too. */
let lastRunStartedAt = -Infinity;

/** Organisations in one run's transaction at most (a statement pair each); the rest go in the next run at once. */
const organisationsPerRun = 100;

/** Organisations whose commits this process has still to number, and its run loop while it is on. */
const pending = new Set<string>();
let loop: Promise<void> | null = null;

/**
 * After a commit that wrote published events: numbers them in the background (the request does not
 * wait). One loop per process numbers every organisation with commits pending in one transaction
 * per run; a commit during a run makes the loop run once more. A failed run (PostgreSQL unreachable)
 * leaves the events to the next commit of the organisation or to the outbox sweeper.
 */
export function sequenceEventsSoon(organisationIds: Iterable<string>): void {
  for (const organisationId of organisationIds) pending.add(organisationId);
  if (loop || !pending.size) return;
  // Given no signal: numbering what committed must not stop because the request's client left.
  loop = runPendingLoop();
}

/**
 * Resolves once the run loop has numbered what this process's commits left (or given up on it): a
 * stopping process waits for it before closing its database, so that the stream has its last
 * commits at once rather than after the sweeper's next pass.
 */
export async function settleEventNumbering(): Promise<void> {
  while (loop) await loop;
}

async function runPendingLoop(): Promise<void> {
  try {
    // A run starts runSpacingMs after the previous one at the earliest, also the first run of a loop:
    // bookings one after another (one connection) end a loop before the next commit, and each had a
    // run, a transaction and a WAL flush of its own. A backlog's next run, and a retry, go at once.
    for (let failures = 0, atOnce = false; pending.size;) {
      const sinceLastRun = performance.now() - lastRunStartedAt;
      if (!atOnce && sinceLastRun < runSpacingMs) await sleep(runSpacingMs - sinceLastRun);
      lastRunStartedAt = performance.now();
      const batch = [...pending].slice(0, organisationsPerRun);
      for (const id of batch) pending.delete(id);
      // Organisations beyond this run's limit were waiting already: the next run takes them at once.
      const waiting = pending.size > 0;
      try {
        const { more, numbered } = await numberOrganisations(batch);
        // An organisation committed to again meanwhile is numbered by the next run anyway; the others
        // are looked at once more for what was committed by callers that found their lock taken.
        const again = [...more, ...(await withUnsequenced(numbered.filter((id) => !pending.has(id))))];
        for (const id of again) pending.add(id);
        failures = 0;
        atOnce = more.length > 0 || waiting;
      } catch (err) {
        for (const id of batch) pending.add(id);
        if (++failures >= maxFailures) {
          logger.warn(
            { err: (err as Error).message, organisationIds: [...pending] },
            'events not numbered for the stream yet; the next commit or the sweeper will',
          );
          pending.clear();
          failures = 0;
        } else await sleep(100 * failures);
        atOnce = true;
      }
    }
  } finally {
    // Here, not once the promise settles: a commit that ends after this line starts a loop of its own.
    loop = null;
  }
}

/**
 * The organisations with published events still unnumbered `olderThanSeconds` after their commit
 * (their process died before numbering them): the outbox sweeper numbers them.
 */
export async function findUnsequencedOrganisations(olderThanSeconds: number): Promise<string[]> {
  const rows = await db()
    .selectDistinct({ organisationId: unsequencedEvents.organisationId })
    .from(unsequencedEvents)
    .where(lt(unsequencedEvents.createdAt, sql`statement_timestamp() - make_interval(secs => ${olderThanSeconds})`));
  return rows.map((r) => r.organisationId);
}

/**
 * Vacuums the numbering queue: every numbered event leaves a deleted row in `unsequenced_events`,
 * which only VACUUM reclaims. The outbox sweeper calls this every 30 s, so that the queue stays a
 * few pages whether or not autovacuum runs on the server (it may be turned off); SKIP_LOCKED: a
 * vacuum already running elsewhere does the same. TRUNCATE false: giving empty pages back to the
 * file system would take the table's exclusive lock (waiting up to 5 s for it), and with it hold
 * back every event insert, whose trigger writes here; the freed space is reused instead.
 */
export async function vacuumUnsequencedEvents(): Promise<void> {
  await pool().unsafe('vacuum (skip_locked, truncate false) unsequenced_events');
}

/** The highest position an organisation's events have (where a new stream starts). */
export async function lastPosition(organisationId: string): Promise<number> {
  const [row] = await db()
    .select({ position: max(eventPositions.position) })
    .from(eventPositions)
    .where(eq(eventPositions.organisationId, organisationId));
  return row?.position ?? 0;
}
