import { lt, max, eq, sql } from 'drizzle-orm';
import { db, prepareSql, runDetached, sql as pg } from '../../db/client.js';
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
export async function sequenceEvents(organisationId: string, { goesAgain = () => false }: { goesAgain?: () => boolean } = {}): Promise<boolean> {
  for (;;) {
    const outcome = await pg.begin(async (tx) => {
      const [lock] = await tx.unsafe<Array<{ ok: boolean }>>(takeLockStatement, [organisationId], { prepare: true });
      if (!lock.ok) return 'busy';
      const [run] = await tx.unsafe<Array<{ numbered: number }>>(numberStatement, [organisationId, runSize, eventStreamChannel], { prepare: true });
      return run.numbered === runSize ? 'more' : run.numbered > 0 ? 'done' : 'nothing';
    });
    if (outcome === 'busy') return false;
    if (outcome === 'more') continue;
    // A caller that runs once more anyway (more was committed meanwhile) leaves the check to that run.
    if (goesAgain() || !(await hasUnsequenced(organisationId))) return true;
  }
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
const selectUnsequenced = prepareSql<{ eventId: string }>(
  db
    .select({ eventId: unsequencedEvents.eventId })
    .from(unsequencedEvents)
    .where(eq(unsequencedEvents.organisationId, sql.placeholder('organisationId')))
    .limit(1)
    .getSQL(),
);

async function hasUnsequenced(organisationId: string): Promise<boolean> {
  return (await selectUnsequenced({ organisationId })).length > 0;
}

/** Failed runs in a row (PostgreSQL unreachable, a statement cancelled) before a commit's numbering is left to the next commit or the sweeper. */
const maxFailures = 5;

/**
 * A run follows the previous run of its organisation in this process by at least this long: under
 * load an organisation's commits follow each other closely, and a run per commit cost PostgreSQL a
 * transaction (and a WAL flush) each; what commits meanwhile is numbered together, well within the
 * stream's second (docs/architecture.md "Write path"). After a quiet moment a run starts at once.
 */
const runSpacingMs = 50;

/** Per organisation: the run of this process, and whether more was committed while it ran. */
const running = new Map<string, { again: boolean }>();

/**
 * After a commit that wrote published events: numbers them in the background (the request does not
 * wait). One run per organisation in this process; a commit during a run makes it go once more. A
 * failed run (PostgreSQL unreachable) leaves the events to the next commit of the organisation or
 * to the outbox sweeper.
 */
export function sequenceEventsSoon(organisationIds: Iterable<string>): void {
  for (const organisationId of organisationIds) {
    const run = running.get(organisationId);
    if (run) {
      run.again = true;
      continue;
    }
    const state = { again: false };
    running.set(organisationId, state);
    // Detached: numbering what committed must not stop because the request's client left.
    void runDetached(async () => {
      try {
        for (let failures = 0; ; ) {
          try {
            do {
              state.again = false;
              const started = Date.now();
              await sequenceEvents(organisationId, { goesAgain: () => state.again });
              if (state.again) await new Promise((resolve) => setTimeout(resolve, runSpacingMs - (Date.now() - started)));
            } while (state.again);
            return;
          } catch (err) {
            if (++failures >= maxFailures) throw err;
            await new Promise((resolve) => setTimeout(resolve, 100 * failures));
          }
        }
      } catch (err) {
        logger.warn({ err: (err as Error).message, organisationId }, 'events not numbered for the stream yet; the next commit or the sweeper will');
      } finally {
        running.delete(organisationId);
      }
    });
  }
}

/**
 * The organisations with published events still unnumbered `olderThanSeconds` after their commit
 * (their process died before numbering them): the outbox sweeper numbers them.
 */
export async function findUnsequencedOrganisations(olderThanSeconds: number): Promise<string[]> {
  const rows = await db
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
  await pg.unsafe('vacuum (skip_locked, truncate false) unsequenced_events');
}

/** The highest position an organisation's events have (where a new stream starts). */
export async function lastPosition(organisationId: string): Promise<number> {
  const [row] = await db.select({ position: max(eventPositions.position) }).from(eventPositions).where(eq(eventPositions.organisationId, organisationId));
  return row?.position ?? 0;
}
