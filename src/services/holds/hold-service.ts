import { and, eq, gt, lte, sql } from 'drizzle-orm';
import { z } from 'zod';
import { db, runSql, type Tx } from '../../db/client.js';
import { availabilityHolds } from '../../db/schema/index.js';
import { hasScope, isPublishable, type AuthContext } from '../../core/auth-context.js';
import { ApiError } from '../../core/errors.js';
import { component, instant, localTime, proposalSchema, serviceDate, uuid } from '../../core/response-schemas.js';
import type { Seating } from '../../lib/availability/seatings.js';
import { VenueDay, seatingOf } from '../../lib/availability/venue-day.js';
import { formatMinutes } from '../../lib/shift-schedule.js';
import { lockAndLoadBookingDay } from '../availability/venue-day-loader.js';
import { insertRow } from '../reservations/reservation-rows.js';
import { noAvailability, occupyFirstFree, occupySeating, seatingColumns } from '../reservations/table-assignment.js';
import { applyTableMoves, evaluateInTurn, retryBookingTransaction, StaleMovesError } from '../reservations/table-moves.js';
import { actorOf, transactionWithEvents } from '../outbox/outbox.js';
import { newId } from '../../lib/uuid-v7.js';
import type { Logger } from 'pino';
import { logger } from '../../logger.js';

/** docs/reservations.md "Slot holds" */
export const HOLD_TTL_SECONDS = { min: 60, max: 900, default: 300 } as const;
export const MAX_LIVE_HOLDS_PER_CALLER = 3;

export type HoldRow = typeof availabilityHolds.$inferSelect;

export interface CreateHoldInput {
  venueId: string;
  serviceDate: string;
  time: string;
  partySize: number;
  tableId?: string;
  ttlSeconds?: number;
}

export const holdSchema = component(
  'Hold',
  z.object({
    id: uuid,
    venueId: uuid,
    serviceDate,
    time: localTime,
    partySize: z.number().int(),
    expiresAt: instant,
    proposal: proposalSchema,
  }),
  'A slot hold (docs/reservations.md "Slot holds"): the table of `proposal` is kept for the party until `expiresAt`.',
);

export function holdJson(row: HoldRow): z.infer<typeof holdSchema> {
  return {
    id: row.id,
    venueId: row.venueId,
    serviceDate: row.serviceDate,
    time: row.time,
    partySize: row.partySize,
    expiresAt: row.expiresAt.toISOString(),
    proposal: {
      time: row.time,
      startsAt: row.startsAt.toISOString(),
      endsAt: row.endsAt.toISOString(),
      turnTimeMinutes: row.turnTimeMinutes,
      seats: row.seats,
      overflowsShift: row.overflowsShift,
    },
  };
}

/** The table or combination a hold keeps. */
export function heldSeatingId(row: HoldRow): string {
  return (row.tableId ?? row.tableCombinationId)!;
}

function seatingOfHold(seating: Seating) {
  const { tableId, tableCombinationId } = seatingColumns(seating);
  return { tableId, tableCombinationId, seats: seating.maxSeats };
}

function checkPermissions(auth: AuthContext, input: CreateHoldInput): void {
  if (input.tableId === undefined) return;
  // As for POST /reservations: choosing a table is a floor operation, never a widget's.
  if (isPublishable(auth)) {
    throw new ApiError('forbidden', 'A publishable key may not send tableId.', { reason: 'publishable_key', fields: ['tableId'] });
  }
  if (!hasScope(auth, 'floor:write')) {
    throw new ApiError('insufficient_scope', 'Choosing a table needs the scope floor:write.', { requiredScope: 'floor:write' });
  }
}

/**
 * docs/reservations.md "Slot holds": a publishable key keeps at most 3 live holds per caller IP. The count is taken
 * under a lock of that caller (the last lock of the transaction, after the venue's), so that
 * concurrent requests of one caller cannot each see 2 and all succeed.
 */
async function checkCallerLimit(tx: Tx, keyId: string, callerIp: string, now: number): Promise<void> {
  // Two statements sent together: the count's snapshot is taken once the lock is held.
  const [, [row]] = await Promise.all([
    runSql(tx, sql`select pg_advisory_xact_lock(hashtext('holds'), hashtext(${keyId} || ${callerIp})) as locked`),
    runSql<{ live: number; next: number | null }>(
      tx,
      sql`select count(*)::int as live, (extract(epoch from min(expires_at)) * 1000)::float8 as next from availability_holds
      where api_key_id = ${keyId} and caller_ip = ${callerIp} and expires_at > ${new Date(now).toISOString()}::timestamptz`,
    ),
  ]);
  if (row.live >= MAX_LIVE_HOLDS_PER_CALLER) {
    const retryAfter = Math.max(1, Math.ceil((row.next! - now) / 1000));
    throw new ApiError(
      'rate_limited',
      `A publishable key may keep at most ${MAX_LIVE_HOLDS_PER_CALLER} live holds per caller; release one or let it expire.`,
      { reason: 'hold_limit' },
      { 'Retry-After': String(retryAfter) },
    );
  }
}

/**
 * POST /availability/holds: the engine's verdict as for a booking, in a transaction under the same
 * venue and pacing locks, then the seating's occupancy rows under the same exclusion constraint.
 * Holds emit no events; the parties a hold moves (docs/reservations.md "Table optimisation") get
 * their history rows, as for a booking.
 */
export async function createHold(
  auth: AuthContext,
  input: CreateHoldInput,
  callerIp: string | null,
  log: Logger = logger,
): Promise<HoldRow> {
  checkPermissions(auth, input);
  const ttlSeconds = input.ttlSeconds ?? HOLD_TTL_SECONDS.default;
  return retryBookingTransaction(() =>
    transactionWithEvents(
      actorOf(auth),
      async (tx, emit) => {
        const { venue, config, bookings, reservationsKey, demand } = await lockAndLoadBookingDay(
          tx,
          auth,
          input.venueId,
          input.serviceDate,
        );
        if (input.tableId !== undefined && seatingOf(config, input.tableId)?.kind !== 'table') {
          throw ApiError.invalid(['tableId'], 'No table of the active floor plan has this id.');
        }
        const now = Date.now();
        if (isPublishable(auth)) await checkCallerLimit(tx, auth.keyId, callerIp ?? 'unknown', now);
        const { day, evaluation } = await evaluateInTurn(
          tx,
          config,
          venue.id,
          new VenueDay(config, input.serviceDate, bookings, now, { reservationsKey, demand }),
          (d) => d.evaluate(input.time, input.partySize, { requestedSeatingId: input.tableId, allSeatings: true }),
          demand,
        );
        if (!evaluation.available) throw noAvailability(evaluation.reason, day.alternatives(input.time, input.partySize));
        const { timing, seatings, moves } = evaluation;
        const startsAt = new Date(timing.startsAt);
        const endsAt = new Date(timing.endsAt);
        await applyTableMoves(tx, emit, venue.id, moves, auth.livemode, now);
        const expiresAt = new Date(now + ttlSeconds * 1000);
        const id = newId();
        const owner = { holdId: id, expiresAt };
        // Pipelined like a booking: the row, then its first seating's occupancy, in one round trip.
        let [row, tookFirst] = await Promise.all([
          insertRow(tx, availabilityHolds, {
            id,
            organisationId: venue.organisationId,
            venueId: venue.id,
            apiKeyId: auth.keyId,
            callerIp: isPublishable(auth) ? (callerIp ?? 'unknown') : null,
            serviceDate: input.serviceDate,
            time: formatMinutes(timing.minuteOfService),
            partySize: input.partySize,
            startsAt,
            endsAt,
            turnTimeMinutes: timing.turnTimeMinutes,
            ...seatingOfHold(seatings[0]),
            overflowsShift: timing.overflowsShift,
            expiresAt,
          }),
          occupySeating(tx, owner, venue.id, seatings[0], startsAt, endsAt),
        ]);
        if (!tookFirst) {
          // Lost to a concurrent booking or hold: an explicit table is a conflict, an automatic choice moves on.
          const explicit = input.tableId !== undefined;
          if (explicit) throw noAvailability('conflict', []);
          if (moves.length) throw new StaleMovesError();
          const seating = await occupyFirstFree(tx, owner, venue.id, seatings.slice(1), startsAt, endsAt, false);
          if (!seating) throw noAvailability('no_table', day.alternatives(input.time, input.partySize));
          [row] = await tx.update(availabilityHolds).set(seatingOfHold(seating)).where(eq(availabilityHolds.id, id)).returning();
        }
        return row;
      },
      log,
      auth.signal,
    ),
  );
}

/** GET /availability/holds/:id: a live hold of this key; 404 once expired, released or consumed. */
export async function getHold(auth: AuthContext, id: string): Promise<HoldRow> {
  const [row] = await db()
    .select()
    .from(availabilityHolds)
    .where(and(eq(availabilityHolds.id, id), eq(availabilityHolds.apiKeyId, auth.keyId), gt(availabilityHolds.expiresAt, new Date())));
  if (!row) throw ApiError.notFound('Hold');
  return row;
}

/** DELETE /availability/holds/:id: releases the hold and its tables; nothing to release is as good (idempotent 204). */
export async function releaseHold(auth: AuthContext, id: string): Promise<void> {
  await db()
    .delete(availabilityHolds)
    .where(and(eq(availabilityHolds.id, id), eq(availabilityHolds.apiKeyId, auth.keyId)));
}

/**
 * For POST /reservations with holdId, in its transaction and under its locks: removes the live hold
 * of this key with its occupancy and returns it (the booking then takes its seating), or null when
 * there is none — missing, expired, consumed or another key's. Liveness is judged at `now`, the
 * instant the engine judges the booking at.
 */
export async function consumeHold(tx: Tx, auth: AuthContext, id: string, now: number): Promise<HoldRow | null> {
  const [row] = await tx
    .delete(availabilityHolds)
    .where(and(eq(availabilityHolds.id, id), eq(availabilityHolds.apiKeyId, auth.keyId), gt(availabilityHolds.expiresAt, new Date(now))))
    .returning();
  return row ?? null;
}

/** worker-timers' daily purge: expired holds (and what is left of their occupancy rows) are deleted. */
export async function purgeExpiredHolds(): Promise<number> {
  const deleted = await db()
    .delete(availabilityHolds)
    .where(lte(availabilityHolds.expiresAt, sql`now()`))
    .returning({ id: availabilityHolds.id });
  return deleted.length;
}
