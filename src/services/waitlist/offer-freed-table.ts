import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { and, asc, eq } from 'drizzle-orm';
import { db, type Tx } from '../../db/client.js';
import { events, organisations, reservations, reservationTables, venues, waitlistEntries, waitlistOffers } from '../../db/schema/index.js';
import { Occupancy } from '../../lib/availability/occupancy.js';
import { orderedSeatings } from '../../lib/availability/seatings.js';
import { resolveTurnTime } from '../../lib/availability/venue-day.js';
import { instantToLocal } from '../../lib/local-time.js';
import { formatMinutes, resolveServiceTime } from '../../lib/shift-schedule.js';
import { findCompatibleEntry } from '../../lib/waitlist-match.js';
import { loadBookings, loadVenueConfig } from '../availability/venue-day-loader.js';
import { systemActor, transactionWithEvents, type Emit } from '../outbox/outbox.js';
import { emitWaitlistEvent } from './waitlist-service.js';

/** An event as worker-events read it: `someoneWaits`, someoneWaitsAt its venue then (wait-quotes.ts). */
type EventRow = typeof events.$inferSelect & { someoneWaits: boolean };

/**
 * The reservation events after which its tables are free: a release (or a completion straight from
 * seated, which emits table_released too), a cancellation, a no-show.
 */
const tableFreeingEvents: ReadonlySet<string> = new Set(['table_released', 'reservation_cancelled', 'reservation_no_show']);

/**
 * The first waiting entry of the venue's serviceDate, in queue order, whose party fits a seating
 * using one of the freed tables from `start` for its turn time (docs/operations.md "Waiting list"), with that seating.
 */
async function findWaitingParty(
  tx: Tx,
  venue: { organisationId: string; venueId: string },
  serviceDate: string,
  freedTableIds: string[],
  start: number,
) {
  const queue = await tx
    .select()
    .from(waitlistEntries)
    .where(
      and(eq(waitlistEntries.venueId, venue.venueId), eq(waitlistEntries.serviceDate, serviceDate), eq(waitlistEntries.status, 'waiting')),
    )
    .orderBy(asc(waitlistEntries.position));
  if (!queue.length) return null;
  const now = Date.now();
  const { config } = await loadVenueConfig(tx, { organisationId: venue.organisationId, venueIds: null }, venue.venueId);
  const bookings = await loadBookings(tx, venue.venueId, serviceDate, serviceDate);
  // The turn time of the shift running at `start` when there is one, else the venue-wide rule.
  const local = instantToLocal(config.venue.timezone, start);
  const shift = resolveServiceTime(config.shifts, config.closures, serviceDate, formatMinutes(local.minutes)).shift;
  return findCompatibleEntry({
    queue,
    seatings: orderedSeatings(config),
    freedTableIds,
    occupancy: new Occupancy(bookings, now),
    start,
    turnTimeMinutes: (partySize) => resolveTurnTime(config, shift?.id ?? '', serviceDate, partySize)?.minutes,
  });
}

/**
 * worker-events, for a reservation event that freed its tables: the tables are offered to the
 * queue of the reservation's serviceDate from now — or from the reservation's start when that is
 * later, as for a cancellation ahead of time. The offer row is keyed by the freeing event, so a
 * replayed event job emits nothing more. Nobody waiting at the venue when the event was read (the
 * queues of days already over have expired): nothing to offer, and not a statement sent.
 */
export async function offerFreedTable(event: EventRow, log: Logger = logger): Promise<void> {
  if (!event.someoneWaits || event.subjectType !== 'reservation' || !event.subjectId || !tableFreeingEvents.has(event.type)) return;
  const [reservation] = await db().select().from(reservations).where(eq(reservations.id, event.subjectId));
  if (!reservation) return;
  const freedTableIds = (
    await db()
      .select({ tableId: reservationTables.tableId })
      .from(reservationTables)
      .where(eq(reservationTables.reservationId, reservation.id))
  ).map((r) => r.tableId);
  if (!freedTableIds.length) return;

  await transactionWithEvents(
    systemActor('worker-events'),
    async (tx, emit) => {
      const [done] = await tx.select().from(waitlistOffers).where(eq(waitlistOffers.freedByEventId, event.id));
      if (done) return;
      const start = Math.max(Date.now(), reservation.startsAt.getTime());
      const match = await findWaitingParty(tx, reservation, reservation.serviceDate, freedTableIds, start);
      if (!match) return;
      const [offer] = await tx
        .insert(waitlistOffers)
        .values({ freedByEventId: event.id, waitlistEntryId: match.entry.id, tableIds: [...match.seating.tableIds] })
        .onConflictDoNothing()
        .returning();
      if (offer) emitWaitlistEvent(emit, match.entry, 'compatible_table_freed', event.livemode);
    },
    log,
  );
}

/**
 * A table unblocked by floor staff is offered to today's queue from now, in the transaction of the
 * unblocking (no event announces an unblocking, so worker-events never sees it); it happens once
 * per actual change of the table.
 */
export async function offerUnblockedTable(tx: Tx, emit: Emit, venueId: string, tableId: string): Promise<void> {
  const [venue] = await tx
    .select({ organisationId: venues.organisationId, timezone: venues.timezone, isTest: organisations.isTest })
    .from(venues)
    .innerJoin(organisations, eq(organisations.id, venues.organisationId))
    .where(eq(venues.id, venueId));
  if (!venue) return;
  const now = Date.now();
  const today = instantToLocal(venue.timezone, now).date;
  const match = await findWaitingParty(tx, { organisationId: venue.organisationId, venueId }, today, [tableId], now);
  if (match) emitWaitlistEvent(emit, match.entry, 'compatible_table_freed', !venue.isTest);
}
