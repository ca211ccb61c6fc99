import type { Logger } from 'pino';
import { logger } from '../../logger.js';
import { and, asc, eq, inArray, isNotNull, isNull, sql } from 'drizzle-orm';
import { db, type DbOrTx } from '../../db/client.js';
import { organisations, reservations, venues } from '../../db/schema/index.js';
import { scopes, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { systemActor, transactionWithEvents } from '../outbox/outbox.js';
import { updateReservation } from '../reservations/change-reservation.js';
import { emitReservationEvents } from '../reservations/reservation-events.js';
import { loadReservationParts } from '../reservations/reservation-view.js';

const batchSize = 200;
/** A reservation more than a day past its start is not announced late any more: the news is stale. */
const lateLookbackHours = 24;

const expected = ['created', 'confirmed'] as const;
/** The actor of the timers' changes in reservation history. */
const timers = systemActor('worker-timers');

async function livemodeByOrganisation(conn: DbOrTx, organisationIds: string[]): Promise<Map<string, boolean>> {
  const rows = await conn
    .select({ id: organisations.id, isTest: organisations.isTest })
    .from(organisations)
    .where(inArray(organisations.id, [...new Set(organisationIds)]));
  return new Map(rows.map((o) => [o.id, !o.isTest]));
}

/** The reservations due a reservation_late, oldest first, locked (SKIP LOCKED): the late scan's statement. */
export function selectDueLate(conn: DbOrTx) {
  return conn
    .select({ id: reservations.id })
    .from(reservations)
    .innerJoin(venues, eq(venues.id, reservations.venueId))
    .where(
      and(
        inArray(reservations.status, expected),
        isNull(reservations.lateNotifiedAt),
        // Bounds on startsAt alone, against a stable clock (statement_timestamp, not the volatile
        // clock_timestamp): the partial index of expected reservations then reads only what is due,
        // however long the history or the book of future reservations (a tolerance is never negative).
        sql`${reservations.startsAt} > statement_timestamp() - make_interval(hours => ${lateLookbackHours})`,
        sql`${reservations.startsAt} <= statement_timestamp()`,
        sql`${reservations.startsAt} + make_interval(mins => ${venues.lateToleranceMinutes}) <= statement_timestamp()`,
      ),
    )
    .orderBy(asc(reservations.startsAt))
    .limit(batchSize)
    .for('update', { of: reservations, skipLocked: true });
}

/**
 * Every 30 s (docs/operations.md "Timers"): a created or confirmed reservation whose startsAt plus the venue's
 * lateToleranceMinutes has passed emits reservation_late exactly once. The marker lateNotifiedAt is
 * set by a conditional UPDATE (… WHERE late_notified_at IS NULL … RETURNING) in the transaction that
 * writes the event, and candidates are locked SKIP LOCKED: two timer processes running at once
 * split the rows between them and never both emit for one reservation. The marker is internal, so
 * updatedAt (the client's version) does not move.
 */
export async function notifyLateReservations(log: Logger = logger): Promise<number> {
  let total = 0;
  for (;;) {
    const count = await transactionWithEvents(
      timers,
      async (tx, emit) => {
        const due = selectDueLate(tx);
        const marked = await tx
          .update(reservations)
          .set({ lateNotifiedAt: sql`clock_timestamp()` })
          .where(and(inArray(reservations.id, due), isNull(reservations.lateNotifiedAt), inArray(reservations.status, expected)))
          .returning();
        if (!marked.length) return 0;
        const livemode = await livemodeByOrganisation(
          tx,
          marked.map((r) => r.organisationId),
        );
        for (const parts of await loadReservationParts(tx, marked)) {
          emitReservationEvents(emit, parts, ['reservation_late'], livemode.get(parts.row.organisationId) ?? true);
        }
        return marked.length;
      },
      log,
    );
    total += count;
    if (count < batchSize) return total;
  }
}

/**
 * The timer acts for the organisation like floor staff would: the no-show goes through the same
 * service as PATCH /reservations/:id {status: no_show}, so its event and the guest's counters are
 * exactly those of a manual no-show.
 */
function timerActor(organisationId: string, livemode: boolean): AuthContext {
  return {
    keyId: 'worker-timers',
    keyName: 'worker-timers',
    organisationId,
    kind: livemode ? 'live' : 'test',
    livemode,
    scopes: new Set(scopes),
    venueIds: null,
    allowedOrigins: [],
    rateLimitPerMinute: null,
    revoked: false,
  };
}

/** The reservations due to become no_show, oldest first: the no-show scan's statement. */
export function selectDueNoShows(conn: DbOrTx) {
  return conn
    .select({
      id: reservations.id,
      organisationId: reservations.organisationId,
      updatedAt: reservations.updatedAt,
      isTest: organisations.isTest,
    })
    .from(reservations)
    .innerJoin(venues, eq(venues.id, reservations.venueId))
    .innerJoin(organisations, eq(organisations.id, reservations.organisationId))
    .where(
      and(
        inArray(reservations.status, expected),
        isNotNull(venues.noShowToleranceMinutes),
        // As for the late scan: a bound the index can use, so future bookings are never read.
        sql`${reservations.startsAt} <= statement_timestamp()`,
        sql`${reservations.startsAt} + make_interval(mins => ${venues.noShowToleranceMinutes}) <= statement_timestamp()`,
      ),
    )
    .orderBy(asc(reservations.startsAt))
    .limit(batchSize);
}

/**
 * Every 30 s (docs/operations.md "Timers"): a created or confirmed reservation whose startsAt plus the venue's
 * noShowToleranceMinutes has passed (null disables it) becomes no_show. Each move is made with the
 * version read here: a reservation changed meanwhile (moved, arrived) is left for the next run to
 * judge again, and a second timer process racing on the same row finds it already no_show, which
 * changes nothing and emits nothing.
 */
export async function markNoShows(log: Logger = logger): Promise<number> {
  let total = 0;
  for (;;) {
    const due = await selectDueNoShows(db());
    let moved = 0;
    for (const r of due) {
      try {
        const parts = await updateReservation(
          timerActor(r.organisationId, !r.isTest),
          r.id,
          { status: 'no_show' },
          r.updatedAt,
          timers,
          log,
        );
        if (parts.row.status === 'no_show') moved++;
      } catch (err) {
        // Changed since it was read (a version mismatch, or staff moved it on): the next run judges it again.
        if (err instanceof ApiError && (err.code === 'conflict' || err.code === 'invalid_request' || err.code === 'not_found')) continue;
        throw err;
      }
    }
    total += moved;
    // A full batch where nothing moved would only be read again: leave it to the next run.
    if (due.length < batchSize || moved === 0) return total;
  }
}
