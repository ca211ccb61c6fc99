import { eq, sql } from 'drizzle-orm';
import { z } from 'zod';
import { db, runSql } from '../../db/client.js';
import { learnedTurnTimes, shifts, turnTimeSourceValues, venues } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { component, uuid } from '../../core/response-schemas.js';
import { chooseTurnTimeRule } from '../../lib/availability/venue-day.js';
import {
  LEARNING_WINDOW_DAYS,
  resolveLearnedCells,
  summariseTurnTimes,
  type LearnedCell,
  type TurnTimeSample,
} from '../../lib/learned-turn-times.js';
import { addDays, instantToLocal } from '../../lib/local-time.js';
import { isoDayOfWeek, resolveServiceTime } from '../../lib/shift-schedule.js';
import { loadVenueConfig } from '../availability/venue-day-loader.js';

export const learnedCellSchema = component(
  'LearnedTurnTimeCell',
  z.object({
    partySizeMin: z.number().int(),
    partySizeMax: z.number().int().nullable().describe('null: and larger'),
    shiftId: uuid,
    dayOfWeek: z.number().int().min(1).max(7).describe('ISO: 1 = Monday … 7 = Sunday'),
    samples: z.number().int().describe("the cell's own completed reservations of the last 8 weeks"),
    p50Minutes: z.number().int().nullable().describe('null: borrowed from the rules and no rule covers the band'),
    p80Minutes: z.number().int().nullable(),
    borrowed: z
      .enum(['all_days', 'party_size', 'configured'])
      .nullable()
      .describe('null: its own figures (12 samples or more); else where its figures come from'),
  }),
  'The learned turn time of one party-size band, shift and day of week (docs/reservations.md "Turn times and wait quotes").',
);

export const learnedTurnTimesSchema = z.object({
  venueId: uuid,
  turnTimeSource: z.enum(turnTimeSourceValues),
  cells: z.array(learnedCellSchema),
});

/**
 * The durations of the venue's completed reservations whose serviceDate lies in the LEARNING_WINDOW_DAYS
 * before `today` (today included): seatedAt → completedAt, or an imported past row's own length. An index
 * range of 8 weeks (reservations_venue_date_idx): the same cost after two years of history as after two months.
 */
async function loadSamples(venueId: string, today: string) {
  return runSql<{ service_date: string; time: string; party_size: number; minutes: number }>(
    db(),
    sql`
    select service_date::text, time, party_size,
      round(extract(epoch from case when source = 'import' and seated_at is null then ends_at - starts_at else completed_at - seated_at end) / 60)::int as minutes
    from reservations
    where venue_id = ${venueId} and status = 'completed'
      and service_date between ${addDays(today, -LEARNING_WINDOW_DAYS)}::date and ${today}::date
      and ((seated_at is not null and completed_at is not null) or source = 'import')`,
  );
}

/**
 * Learns one venue's turn times again from its last 8 weeks and stores them (learned_turn_times). A
 * sample's shift is the one its time falls in that day (closures aside: the party did sit).
 */
export async function learnVenueTurnTimes(venueId: string, now = Date.now()): Promise<void> {
  const [venue] = await db().select({ timezone: venues.timezone }).from(venues).where(eq(venues.id, venueId));
  if (!venue) return;
  const venueShifts = await db().select().from(shifts).where(eq(shifts.venueId, venueId));
  const today = instantToLocal(venue.timezone, now).date;
  const samples: TurnTimeSample[] = (await loadSamples(venueId, today)).map((r) => ({
    shiftId: resolveServiceTime(venueShifts, [], r.service_date, r.time).shift?.id ?? '',
    dayOfWeek: isoDayOfWeek(r.service_date),
    partySize: r.party_size,
    minutes: r.minutes,
  }));
  const stats = summariseTurnTimes(samples);
  await db()
    .insert(learnedTurnTimes)
    .values({ venueId, stats, learnedForDate: today })
    .onConflictDoUpdate({
      target: learnedTurnTimes.venueId,
      set: { stats, learnedForDate: today, updatedAt: sql`clock_timestamp()` },
    });
}

/**
 * The timer task learn-turn-times: the venues never learned, learned for an earlier day (the window
 * moved), or with a reservation completed (or imported) since — the minute of slack covers a completion
 * committed just after the last learning read. Returns how many venues were learned.
 */
export async function learnStaleTurnTimes(now = Date.now()): Promise<number> {
  const stale = await runSql<{ id: string }>(
    db(),
    sql`
    select v.id from venues v
    left join learned_turn_times l on l.venue_id = v.id
    where l.venue_id is null
      or l.learned_for_date < (clock_timestamp() at time zone v.timezone)::date
      or exists (select 1 from reservations r
        where r.venue_id = v.id and r.updated_at > l.updated_at - interval '1 minute' and r.status = 'completed')`,
  );
  for (const { id } of stale) await learnVenueTurnTimes(id, now);
  return stale.length;
}

/** GET /venues/{id}/turn-times/learned: every cell of the venue's active shifts, borrowing resolved against today's rules. */
export async function getLearnedTurnTimes(auth: AuthContext, venueId: string): Promise<z.output<typeof learnedTurnTimesSchema>> {
  const { venue, config } = await loadVenueConfig(db(), auth, venueId);
  const cells: LearnedCell[] = resolveLearnedCells(
    config.learnedTurnTimes ?? null,
    config.shifts.filter((s) => s.isActive),
    (shiftId, partySize) => chooseTurnTimeRule(config.turnTimeRules, shiftId, partySize)?.durationMinutes ?? null,
  );
  return { venueId: venue.id, turnTimeSource: config.venue.turnTimeSource ?? 'configured', cells };
}
