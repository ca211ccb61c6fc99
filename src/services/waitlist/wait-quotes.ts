import { and, asc, eq, inArray, sql, type Column, type SQL } from 'drizzle-orm';
import { z } from 'zod';
import { db, runSql, type DbOrTx } from '../../db/client.js';
import { qualifiedColumn } from '../../db/prepared-select.js';
import { waitlistEntries } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { isLapsedHold } from '../../lib/availability/occupancy.js';
import { orderedSeatings } from '../../lib/availability/seatings.js';
import { resolveTurnTime } from '../../lib/availability/venue-day.js';
import type { VenueConfig } from '../../lib/availability/types.js';
import { groupBy } from '../../lib/group-by.js';
import { addDays, instantToLocal, serviceDayClock } from '../../lib/local-time.js';
import { MINUTES_PER_DAY, shiftWindow, shiftsOn } from '../../lib/shift-schedule.js';
import { estimateSeatTimes, type FloorNow, type SeatEstimate } from '../../lib/wait-quotes.js';
import { loadBookings, loadVenueConfig } from '../availability/venue-day-loader.js';
import { activeWaitlistStatuses } from './waitlist-service.js';

export const waitQuoteSchema = component(
  'WaitQuote',
  z.union([
    z.object({
      partySize: z.number().int(),
      partiesAhead: z.number().int(),
      estimatedSeatTime: z.object({ from: instant, to: instant }),
      estimatedWaitMinutes: z.number().int(),
    }),
    z.object({
      partySize: z.number().int(),
      partiesAhead: z.number().int(),
      estimatedSeatTime: z.null(),
      estimatedWaitMinutes: z.null(),
      reason: z.literal('after_last_seating'),
    }),
  ]),
  'When a party of that size joining the waiting list now is expected to sit (docs/reservations.md "Turn times and wait quotes").',
);

export const waitQuotesSchema = z.object({ venueId: uuid, quotes: z.array(waitQuoteSchema) });

/**
 * The service now: the shift running (or the next one of the day), as the serviceDate it belongs to
 * — the previous date's when now is in that shift's after-midnight part — and its instants.
 */
function currentService(config: VenueConfig, now: number) {
  const local = instantToLocal(config.venue.timezone, now);
  let best: { serviceDate: string; shiftId: string; opensAt: number; lastSeatingAt: number } | undefined;
  for (const [serviceDate, minute] of [
    [local.date, local.minutes],
    [addDays(local.date, -1), local.minutes + MINUTES_PER_DAY],
  ] as const) {
    const closures = config.closures.filter((c) => c.from <= serviceDate && serviceDate <= c.to);
    const clock = serviceDayClock(config.venue.timezone, serviceDate);
    for (const shift of shiftsOn(config.shifts, serviceDate)) {
      if (closures.some((c) => c.shiftIds.length === 0 || c.shiftIds.includes(shift.id))) continue;
      const window = shiftWindow(shift);
      if (window.lastSeating < minute) continue;
      const candidate = { serviceDate, shiftId: shift.id, opensAt: clock(window.start), lastSeatingAt: clock(window.lastSeating) };
      if (!best || candidate.lastSeatingAt < best.lastSeatingAt) best = candidate;
    }
  }
  return best;
}

/**
 * The floor of a venue now as the estimator sees it (src/lib/wait-quotes.ts), and the queue of the
 * service's date in order. Null floor: no service left today.
 */
async function loadFloor(conn: DbOrTx, access: Pick<AuthContext, 'organisationId' | 'venueIds'>, venueId: string, now: number) {
  const { venue, config } = await loadVenueConfig(conn, access, venueId);
  const service = currentService(config, now);
  if (!service) return { venue, floor: null, queue: [] };
  const [bookings, seatedRows, queue] = await Promise.all([
    loadBookings(conn, venueId, service.serviceDate, service.serviceDate),
    runSql<{ id: string; seated_at: Date }>(
      conn,
      sql`select id, seated_at from reservations where venue_id = ${venueId} and status = 'seated' and seated_at is not null`,
    ),
    conn
      .select({ id: waitlistEntries.id, partySize: waitlistEntries.partySize })
      .from(waitlistEntries)
      .where(
        and(
          eq(waitlistEntries.venueId, venueId),
          eq(waitlistEntries.serviceDate, service.serviceDate),
          inArray(waitlistEntries.status, activeWaitlistStatuses),
        ),
      )
      .orderBy(asc(waitlistEntries.position)),
  ]);
  const seatedAt = new Map(seatedRows.map((r) => [r.id, new Date(r.seated_at).getTime()]));
  const floor: FloorNow = {
    now,
    opensAt: service.opensAt,
    lastSeatingAt: service.lastSeatingAt,
    seatings: orderedSeatings(config),
    seated: bookings
      .filter((b) => b.status === 'seated' && b.tableIds.length)
      .map((b) => ({ tableIds: b.tableIds, partySize: b.partySize, seatedAt: seatedAt.get(b.id) ?? b.startsAt })),
    // Expected parties keep their tables for them, late ones included, until they are released or marked no_show.
    due: bookings
      .filter((b) => ['created', 'confirmed', 'arrived'].includes(b.status) && b.tableIds.length && !isLapsedHold(b, now))
      .map((b) => ({ tableIds: b.tableIds, partySize: b.partySize, startsAt: b.startsAt })),
    turnMinutes: (partySize) => {
      const turn = resolveTurnTime(config, service.shiftId, service.serviceDate, partySize);
      return turn && { p50: turn.minutes, p80: turn.p80Minutes };
    },
  };
  return { venue, floor, queue };
}

const noSeat = { estimatedSeatTime: null, estimatedWaitMinutes: null, reason: 'after_last_seating' } as const;

function quoteJson(estimate: SeatEstimate) {
  if (estimate.estimatedSeatTime === null) return noSeat;
  return {
    estimatedSeatTime: {
      from: new Date(estimate.estimatedSeatTime.from).toISOString(),
      to: new Date(estimate.estimatedSeatTime.to).toISOString(),
    },
    estimatedWaitMinutes: estimate.estimatedWaitMinutes,
  };
}

/** GET /waitlist/quote: each size as if the party joined the queue now, behind every party waiting. */
export async function quoteWaits(auth: AuthContext, venueId: string, partySizes: readonly number[], now = Date.now()) {
  const { venue, floor, queue } = await loadFloor(db(), auth, venueId, now);
  const estimates = floor
    ? estimateSeatTimes(
        floor,
        queue.map((e) => e.partySize),
        partySizes,
      ).asking
    : partySizes.map(() => noSeat);
  return {
    venueId: venue.id,
    quotes: partySizes.map((partySize, i) => ({ partySize, partiesAhead: queue.length, ...quoteJson(estimates[i]) })),
  };
}

/**
 * worker-events, after a change of the venue's floor or queue: the estimate of every entry of the
 * current service's queue, written where it changed (docs/reservations.md "Turn times and wait
 * quotes"). An estimate is derived data: its change leaves updatedAt alone. Returns the entries changed.
 */
async function refreshWaitEstimates(venue: { id: string; organisationId: string }, now = Date.now()): Promise<number> {
  const { floor, queue } = await loadFloor(db(), { organisationId: venue.organisationId, venueIds: null }, venue.id, now);
  if (!queue.length || !floor) return 0;
  const estimates = estimateSeatTimes(
    floor,
    queue.map((e) => e.partySize),
  ).queue;
  const values = queue.map((entry, i) => {
    const e = estimates[i];
    const range = e.estimatedSeatTime;
    return sql`(${entry.id}::uuid, ${range ? new Date(range.from).toISOString() : null}::timestamptz, ${range ? new Date(range.to).toISOString() : null}::timestamptz, ${e.estimatedWaitMinutes}::int)`;
  });
  const changed = await runSql<{ id: string }>(
    db(),
    sql`
    update waitlist_entries w set estimated_seat_from = v.seat_from, estimated_seat_to = v.seat_to, estimated_wait_minutes = v.wait_minutes
    from (values ${sql.join(values, sql`, `)}) as v(id, seat_from, seat_to, wait_minutes)
    where w.id = v.id and w.status in ('waiting', 'notified')
      and (w.estimated_seat_from, w.estimated_seat_to, w.estimated_wait_minutes) is distinct from (v.seat_from, v.seat_to, v.wait_minutes)
    returning w.id`,
  );
  return changed.length;
}

/**
 * SQL: whether anybody waits at the venue the column `venueId` holds (an entry waiting or notified, of its
 * current service day or the day before: the queues of days over expire). Most floor changes happen
 * with nobody waiting; worker-events reads this with a batch's events (process-event.ts), so that the
 * events of such a venue send no statement for the estimates nor for a freed table's offer. An entry
 * that joins the queue after that read has an event of its own, processed after it, which estimates
 * the queue again. The column is named with its table (qualifiedColumn): a bare venue_id here would
 * be the waiting entry's own.
 */
export function someoneWaitsAt(venueId: Column): SQL<boolean> {
  // The active entries' partial index, keyed by venue, holds only the queues not yet over (the daily
  // expiry ends the rest): the check reads a few entries of this venue's, however long its history
  // and however many the platform's other venues.
  return sql<boolean>`exists (select 1 from venues waiting_venue join waitlist_entries waiting on waiting.venue_id = waiting_venue.id
      and waiting.service_date >= (now() at time zone waiting_venue.timezone)::date - 1
    where waiting_venue.id = ${qualifiedColumn(venueId)} and waiting.status in ('waiting', 'notified'))`;
}

/** An event as worker-events read it: `someoneWaits`, someoneWaitsAt its venue then. */
type EventRow = { id: string; type: string; organisationId: string; venueId: string | null; someoneWaits: boolean };

/** The events after which a venue's floor or queue is not what the estimates were made from. */
const floorChangingEvents: ReadonlySet<string> = new Set([
  'reservation_created',
  'reservation_modified',
  'reservation_cancelled',
  'reservation_no_show',
  'guest_seated',
  'table_released',
  'meal_completed',
  'waitlist_entry_created',
  'waitlist_entry_cancelled',
]);

/**
 * worker-events: the estimates of each venue a batch of events changed and somebody waited at,
 * once per venue. Returns the failure of each event whose venue could not be estimated again, so
 * that its job is retried.
 */
export async function refreshEstimatesAfter(rows: readonly EventRow[]): Promise<Map<string, Error>> {
  // Each venue's events; the first names the venue and its organisation.
  const byVenue = [
    ...groupBy(
      rows.filter((e) => e.venueId && e.someoneWaits && floorChangingEvents.has(e.type)),
      (e) => e.venueId!,
    ).values(),
  ];
  const failed = new Map<string, Error>();
  const results = await Promise.allSettled(
    byVenue.map(([first]) => refreshWaitEstimates({ id: first.venueId!, organisationId: first.organisationId })),
  );
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    const error = result.reason instanceof Error ? result.reason : new Error(String(result.reason));
    for (const event of byVenue[i]) failed.set(event.id, error);
  });
  return failed;
}
