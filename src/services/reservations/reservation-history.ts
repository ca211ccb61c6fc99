import { and, desc, eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '../../db/client.js';
import { events } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, instant, uuid } from '../../core/response-schemas.js';
import { historyOnlyEventTypes, reservationEventTypes } from '../../lib/event-catalogue.js';
import { diffReservation, historyFields } from '../../lib/reservation-changes.js';
import type { Actor } from '../outbox/outbox.js';
import { fetchEventPage } from '../events/event-service.js';
import type { ListQuery } from '../pagination.js';
import { getVisibleReservation } from './list-reservations.js';

type EventRow = typeof events.$inferSelect;

/** One entry of GET /reservations/{id}/history (docs/reservations.md "Reservation history"). */
export const reservationHistoryEntrySchema = component(
  'ReservationHistoryEntry',
  z.object({
    eventId: uuid.describe('The event (or history-only row) the entry is built from'),
    type: z.enum([...reservationEventTypes, ...historyOnlyEventTypes]),
    createdAt: instant,
    actor: z.object({ kind: z.enum(['api_key', 'widget', 'system', 'import']), name: z.string() }),
    changes: z.partialRecord(z.enum(historyFields), z.object({ from: z.unknown(), to: z.unknown() })),
  }),
  "A change of a reservation: who made it and the fields that differ from the previous entry's version.",
);

/** Events recorded before the actor was kept (migration 0014) name no one. */
const unrecordedActor: Actor = { kind: 'system', name: 'unrecorded' };

function reservationOf(event: EventRow | undefined): Record<string, unknown> | null {
  const reservation = event?.data.reservation;
  return reservation && typeof reservation === 'object' ? (reservation as Record<string, unknown>) : null;
}

/**
 * GET /reservations/:id/history (docs/reservations.md "Reservation history"): the reservation's events, oldest first, each
 * with its actor and the fields that differ from the version the previous event carried. Events
 * of one reservation are written under its row lock, so their createdAt order is their commit
 * order. History-only rows (imports) are included. `changes` never carries guest data beyond
 * guestId, which every reservations:read reader sees on the reservation itself.
 */
export async function listReservationHistory(auth: AuthContext, id: string, query: ListQuery) {
  await getVisibleReservation(auth, id);
  const ofReservation = and(
    eq(events.organisationId, auth.organisationId),
    eq(events.subjectType, 'reservation'),
    eq(events.subjectId, id),
  );
  const page = await fetchEventPage(query, ofReservation);
  // The version before the page's first entry: what its changes are measured against.
  const first = page.rows[0];
  const [before] = first
    ? await db()
        .select()
        .from(events)
        .where(
          and(ofReservation, sql`(${events.createdAt}, ${events.id}) < (${first.createdAt.toISOString()}::timestamptz, ${first.id}::uuid)`),
        )
        .orderBy(desc(events.createdAt), desc(events.id))
        .limit(1)
    : [];
  let previous = reservationOf(before);
  const data = page.rows.map((event) => {
    const current = reservationOf(event) ?? {};
    const entry = {
      eventId: event.id,
      type: event.type,
      createdAt: event.createdAt.toISOString(),
      actor: event.actor ?? unrecordedActor,
      changes: diffReservation(previous, current),
    };
    previous = current;
    return entry;
  });
  return { data, nextCursor: page.nextCursor };
}
