import { Queue } from 'bullmq';
import { pool } from '../../db/client.js';
import { webhookDeliveryJob } from '../../jobs/webhook-delivery-job.js';
import { getQueueConnection } from '../../queues/queues.js';
import { bullPrefixOf } from '../../redis/key-layout.js';
import { deliveryOverdueAfterSeconds } from '../webhooks/sweep-deliveries.js';

/**
 * How far past its nextAttemptAt a pending delivery may be before it counts as overdue: the sweep
 * re-enqueues a delivery overdue by deliveryOverdueAfterSeconds, it runs every 30 s, and a worker
 * keeping up attempts it within a few seconds; 30 s more of margin.
 */
export const overdueDeliverySeconds = deliveryOverdueAfterSeconds + 30 + 30;

/** A pending delivery written this recently may still be on its way to the queue (enqueued after commit). */
const jobGraceSeconds = 10;

/** The job states of a delivery that will still attempt it. */
const schedulingStates = new Set(['waiting', 'delayed', 'active', 'prioritized', 'waiting-children']);

/** Each count is a number of violations; all zero on a consistent database. */
export interface InvariantCounts {
  /** Pairs of live occupancies of one table over overlapping intervals, slot holds' included (the exclusion constraint forbids them). */
  overlappingTableOccupants: number;
  /** Live occupancies of reservations that no longer hold a table (released, completed, no_show, cancelled). */
  liveTablesOfFinishedReservations: number;
  /** Pacing blocks (rule, serviceDate, block) whose covers exceed maxCovers, reservations flagged needsAttention not counted, live slot holds counted. */
  pacingBlocksOverMaxCovers: number;
  /** Service tag names carried by guests that are not a tag of the guest's venue (exact name). */
  unknownGuestServiceTags: number;
  /** Pending deliveries, unchanged for 10 s, whose BullMQ job is missing or finished (in every queue prefix looked at): nothing will attempt them. */
  pendingDeliveriesWithoutJob: number;
  /** Pending deliveries whose nextAttemptAt is more than overdueDeliverySeconds in the past. */
  overdueDeliveries: number;
}

export interface InvariantScope {
  /** Only these venues (tests check the venues they made); every venue when absent. */
  venueIds?: readonly string[];
  /**
   * The queue prefixes whose webhook-delivery queue may hold a delivery's job (the command line's
   * QUEUE_PREFIX unless told others). A delivery has a job when one of them has it waiting, delayed
   * or active (a test run whose files each use a prefix of their own checks them all).
   */
  queuePrefixes: readonly string[];
}

/** Minutes of an HH:mm column, in SQL. */
const minutesOf = (column: string) => pool().unsafe(`(split_part(${column}, ':', 1)::int * 60 + split_part(${column}, ':', 2)::int)`);

/**
 * Runs the SQL invariants of docs/reservations.md (and the delivery queue's) on the configured
 * database and Redis. Read-only; each count is one statement, so a busy database may show a
 * transient delivery count but never a transient table, pacing or tag count (those are committed
 * atomically).
 */
export async function checkInvariants(scope: InvariantScope): Promise<InvariantCounts> {
  const venues = scope.venueIds ? [...scope.venueIds] : null;
  const inScope = (column: string) =>
    venues ? pool()`and ${pool()(column)} = any(string_to_array(${venues.join(',')}, ',')::uuid[])` : pool()``;

  const [[occupancy], [pacing], [tags], [deliveries]] = await Promise.all([
    pool()<{ overlapping: number; finished: number }[]>`
      select
        (select count(*)::int from reservation_tables a
          join reservation_tables b on b.table_id = a.table_id and b.ctid > a.ctid and b.live and b.during && a.during
          where a.live ${inScope('a.venue_id')}) as overlapping,
        (select count(*)::int from reservation_tables rt
          join reservations r on r.id = rt.reservation_id
          where rt.live and r.status not in ('created', 'confirmed', 'arrived', 'seated') ${inScope('rt.venue_id')}) as finished`,
    // docs/venue-configuration.md as the engine counts (src/lib/availability/pacing.ts): blocks of windowMinutes from the
    // shift's start, times before the start belong after midnight, statuses but cancelled and no_show.
    pool()<{ over: number }[]>`
      with rule as (
        select p.id, p.venue_id, p.max_covers, p.window_minutes, s.days_of_week, s.valid_from, s.valid_to,
          ${minutesOf('s.start_time')} as start_min,
          case when ${minutesOf('s.end_time')} <= ${minutesOf('s.start_time')} then ${minutesOf('s.end_time')} + 1440 else ${minutesOf('s.end_time')} end as end_min
        from pacing_rules p join shifts s on s.id = p.shift_id
        where p.is_enabled and s.is_active and p.window_minutes > 0 ${inScope('p.venue_id')}
      ), booked as (
        select rule.id as rule_id, rule.max_covers, r.service_date, r.party_size, rule.start_min, rule.window_minutes,
          case when ${minutesOf('r.time')} < rule.start_min then ${minutesOf('r.time')} + 1440 else ${minutesOf('r.time')} end as minute,
          rule.end_min
        from rule join (
          -- Days from yesterday on (a shift past midnight belongs to the day before): pacing guards the
          -- bookings still to come, and a finished day was judged under the rules of its time. Read by
          -- the index on (venue_id, service_date), so the check does not grow with history.
          select venue_id, service_date, time, party_size from reservations
          where status not in ('cancelled', 'no_show') and not needs_attention and service_date >= current_date - 1
          union all
          -- Slot holds count toward pacing until they expire (docs/reservations.md "Slot holds").
          select venue_id, service_date, time, party_size from availability_holds where expires_at > clock_timestamp()
        ) r on r.venue_id = rule.venue_id
        where extract(isodow from r.service_date)::int = any(rule.days_of_week)
          and (rule.valid_from is null or rule.valid_from <= r.service_date)
          and (rule.valid_to is null or r.service_date <= rule.valid_to)
      )
      select count(*)::int as over from (
        select 1 from booked
        where minute <= end_min
        group by rule_id, max_covers, service_date, start_min + ((minute - start_min) / window_minutes) * window_minutes
        having sum(party_size) > max_covers
      ) blocks`,
    pool()<{ unknown: number }[]>`
      select count(*)::int as unknown from guests g cross join unnest(g.service_tags) as t(name)
      where not exists (select 1 from service_tags s where s.venue_id = g.venue_id and s.name = t.name) ${inScope('g.venue_id')}`,
    pool()<{ overdue: number; pending: string[] }[]>`
      select
        (select count(*)::int from webhook_deliveries
          where status = 'pending' and next_attempt_at < statement_timestamp() - make_interval(secs => ${overdueDeliverySeconds}) ${inScope('venue_id')}) as overdue,
        (select coalesce(json_agg(id), '[]'::json) from webhook_deliveries
          where status = 'pending' and updated_at < statement_timestamp() - make_interval(secs => ${jobGraceSeconds}) ${inScope('venue_id')}) as pending`,
  ]);

  return {
    overlappingTableOccupants: occupancy.overlapping,
    liveTablesOfFinishedReservations: occupancy.finished,
    pacingBlocksOverMaxCovers: pacing.over,
    unknownGuestServiceTags: tags.unknown,
    pendingDeliveriesWithoutJob: await countWithoutJob(deliveries.pending, scope.queuePrefixes),
    overdueDeliveries: deliveries.overdue,
  };
}

/** Asks Redis only when there is something to ask (a check of reservations alone needs no Redis). */
async function countWithoutJob(ids: string[], prefixes: readonly string[]): Promise<number> {
  let missing = ids;
  for (const prefix of new Set(prefixes)) {
    if (!missing.length) break;
    const name = webhookDeliveryJob.queueName;
    const queue = new Queue(name, { connection: getQueueConnection(), prefix: bullPrefixOf(prefix, name) });
    try {
      const stillMissing: string[] = [];
      for (let i = 0; i < missing.length; i += 200) {
        const batch = missing.slice(i, i + 200);
        const states = await Promise.all(batch.map((id) => queue.getJobState(id)));
        stillMissing.push(...batch.filter((_, j) => !schedulingStates.has(states[j])));
      }
      missing = stillMissing;
    } finally {
      // The connection is shared: closing the queue leaves it to closeQueues.
      await queue.close();
    }
  }
  return missing.length;
}

export function totalViolations(counts: InvariantCounts): number {
  return Object.values(counts).reduce((a, b) => a + b, 0);
}
