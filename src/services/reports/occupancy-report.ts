import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { db } from '../../db/client.js';
import { readTolerantOfLag } from '../../db/read-replica.js';
import type { AuthContext } from '../../core/auth-context.js';
import { count, instant, localTime, serviceDate, uuid } from '../../core/response-schemas.js';
import { serviceDayClock } from '../../lib/local-time.js';
import { formatMinutes, shiftWindow, shiftsOn } from '../../lib/shift-schedule.js';
import { loadVenueConfig } from '../availability/venue-day-loader.js';

export const occupancyReportSchema = z
  .object({
    venueId: uuid,
    serviceDate,
    timezone: z.string(),
    slotIntervalMinutes: z.number().int(),
    seats: count,
    tables: count,
    data: z.array(
      z.object({
        time: localTime,
        startsAt: instant,
        reservations: count,
        covers: count,
        arrivals: count,
        arrivingCovers: count,
        tablesInUse: count,
        occupancyRate: z.number().nullable(),
      }),
    ),
  })
  .describe('The floor of one serviceDate, slot by slot.');

interface SlotRow {
  i: number;
  reservations: number;
  covers: number;
  arrivals: number;
  arriving_covers: number;
  tables_in_use: number;
}

/**
 * GET /reports/occupancy: the floor through one serviceDate, slot by slot (the venue's
 * slotIntervalMinutes, from each open shift's start to its end). At each slot's instant:
 * - reservations / covers: the parties on the floor or expected there (not cancelled, not no_show)
 *   whose stay covers the instant — released and completed ones until their table was freed,
 *   seated ones past their end until now;
 * - tablesInUse: the tables those parties sit at;
 * - arrivals / arrivingCovers: parties due to start within the slot;
 * - occupancyRate: covers ÷ seats (the maxSeats of the active plan's unblocked tables), 4 decimals.
 */
export async function occupancyReport(
  auth: AuthContext,
  q: { venueId: string; serviceDate: string },
): Promise<z.output<typeof occupancyReportSchema>> {
  const { venue, config } = await loadVenueConfig(db(), auth, q.venueId);
  const interval = config.venue.slotIntervalMinutes;
  const closures = config.closures.filter((c) => c.from <= q.serviceDate && q.serviceDate <= c.to);
  const open = closures.some((c) => c.shiftIds.length === 0)
    ? []
    : shiftsOn(config.shifts, q.serviceDate).filter((s) => !closures.some((c) => c.shiftIds.includes(s.id)));
  const clock = serviceDayClock(venue.timezone, q.serviceDate);
  const slots = open
    .map((s) => shiftWindow(s))
    .sort((a, b) => a.start - b.start)
    .flatMap((w) => Array.from({ length: Math.ceil((w.end - w.start) / interval) }, (_, k) => w.start + k * interval))
    .map((minute) => ({ time: formatMinutes(minute), startsAt: new Date(clock(minute)).toISOString() }));
  const usable = config.tables.filter((t) => !t.isBlocked);
  const seats = usable.reduce((sum, t) => sum + t.maxSeats, 0);

  const rows = slots.length
    ? ((await readTolerantOfLag((conn) =>
        conn.execute(sql`
        with slots as (
          select s.t, s.i from unnest(${`{${slots.map((s) => s.startsAt).join(',')}}`}::timestamptz[]) with ordinality as s(t, i)
        ),
        stays as (
          select r.id, r.party_size, r.starts_at,
            case when r.status in ('released', 'completed') then coalesce(r.freed_at, r.ends_at)
                 when r.status = 'seated' then greatest(r.ends_at, clock_timestamp())
                 else r.ends_at end as leaves_at
          from reservations r
          where r.venue_id = ${venue.id} and r.service_date = ${q.serviceDate}::date and r.status not in ('cancelled', 'no_show')
        )
        select s.i::int as i,
          (select count(*) from stays where starts_at <= s.t and s.t < leaves_at)::int as reservations,
          (select coalesce(sum(party_size), 0) from stays where starts_at <= s.t and s.t < leaves_at)::int as covers,
          (select count(*) from stays where starts_at >= s.t and starts_at < s.t + make_interval(mins => ${interval}))::int as arrivals,
          (select coalesce(sum(party_size), 0) from stays where starts_at >= s.t and starts_at < s.t + make_interval(mins => ${interval}))::int as arriving_covers,
          (select count(distinct rt.table_id) from stays join reservation_tables rt on rt.reservation_id = stays.id
            where stays.starts_at <= s.t and s.t < stays.leaves_at)::int as tables_in_use
        from slots s
        order by s.i
      `),
      )) as unknown as SlotRow[])
    : [];
  return {
    venueId: venue.id,
    serviceDate: q.serviceDate,
    timezone: venue.timezone,
    slotIntervalMinutes: interval,
    seats,
    tables: usable.length,
    data: rows.map((r) => ({
      ...slots[r.i - 1],
      reservations: r.reservations,
      covers: r.covers,
      arrivals: r.arrivals,
      arrivingCovers: r.arriving_covers,
      tablesInUse: r.tables_in_use,
      occupancyRate: seats ? Math.round((r.covers / seats) * 10_000) / 10_000 : null,
    })),
  };
}
