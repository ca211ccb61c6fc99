import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/client.js';
import type { AuthContext } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import type { Booking, ReservationStatus, VenueConfig } from '../../lib/availability/types.js';
import { addDays, naiveDayStartMs } from '../../lib/local-time.js';

/** The venue fields the reservation services need besides its configuration. */
export interface LoadedVenue {
  id: string;
  organisationId: string;
  countryCode: string;
  timezone: string;
}

export interface LoadedVenueConfig {
  venue: LoadedVenue;
  config: VenueConfig;
}

type Row = Record<string, unknown>;

/**
 * The venue and its whole configuration (shifts, closures from `fromDate` on, rules, tables and
 * combinations of the active plan) in one round trip. `lock`: FOR SHARE on the venue row, so that
 * a floor or configuration change (which takes FOR NO KEY UPDATE on it) waits for the writes that
 * read the configuration, and the other way round. 404 when the key may not see the venue.
 */
export async function loadVenueConfig(
  conn: DbOrTx,
  access: Pick<AuthContext, 'organisationId' | 'venueIds'>,
  venueId: string,
  fromDate: string,
  lock = false,
): Promise<LoadedVenueConfig> {
  if (access.venueIds !== null && !access.venueIds.includes(venueId)) throw ApiError.notFound('Venue');
  const rows = (await conn.execute(sql`
    select v.id, v.organisation_id, v.country_code, v.timezone, v.slot_interval_minutes, v.booking_horizon_days, v.min_notice_minutes,
      (select coalesce(json_agg(json_build_object('id', s.id, 'daysOfWeek', s.days_of_week, 'startTime', s.start_time,
          'lastSeatingTime', s.last_seating_time, 'endTime', s.end_time, 'validFrom', s.valid_from, 'validTo', s.valid_to,
          'isActive', s.is_active)), '[]') from shifts s where s.venue_id = v.id) as shifts,
      (select coalesce(json_agg(json_build_object('from', c."from", 'to', c."to", 'shiftIds', c.shift_ids)), '[]')
        from closures c where c.venue_id = v.id and c."to" >= ${fromDate}::date) as closures,
      (select coalesce(json_agg(json_build_object('id', r.id, 'shiftId', r.shift_id, 'minPartySize', r.min_party_size,
          'maxPartySize', r.max_party_size, 'durationMinutes', r.duration_minutes)), '[]') from turn_time_rules r where r.venue_id = v.id) as turn_time_rules,
      (select coalesce(json_agg(json_build_object('id', p.id, 'shiftId', p.shift_id, 'isEnabled', p.is_enabled,
          'maxCovers', p.max_covers, 'windowMinutes', p.window_minutes)), '[]') from pacing_rules p where p.venue_id = v.id) as pacing_rules,
      (select coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'areaId', t.area_id, 'areaPosition', a.position,
          'minSeats', t.min_seats, 'maxSeats', t.max_seats, 'isBlocked', t.is_blocked)), '[]')
        from floor_tables t
        join floor_plans fp on fp.id = t.floor_plan_id and fp.is_active
        join areas a on a.id = t.area_id
        where t.venue_id = v.id and t.deleted_at is null) as tables,
      (select coalesce(json_agg(json_build_object('id', tc.id, 'tableIds', tc.table_ids)), '[]')
        from table_combinations tc
        join floor_plans fp on fp.id = tc.floor_plan_id and fp.is_active
        where tc.venue_id = v.id and tc.deleted_at is null) as combinations
    from venues v
    where v.id = ${venueId} and v.organisation_id = ${access.organisationId}
    ${lock ? sql`for share of v` : sql``}
  `)) as unknown as Row[];
  const row = rows[0];
  if (!row) throw ApiError.notFound('Venue');
  return {
    venue: {
      id: row.id as string,
      organisationId: row.organisation_id as string,
      countryCode: row.country_code as string,
      timezone: row.timezone as string,
    },
    config: {
      venue: {
        timezone: row.timezone as string,
        slotIntervalMinutes: row.slot_interval_minutes as number,
        bookingHorizonDays: row.booking_horizon_days as number,
        minNoticeMinutes: row.min_notice_minutes as number,
      },
      shifts: row.shifts as VenueConfig['shifts'],
      closures: row.closures as VenueConfig['closures'],
      turnTimeRules: row.turn_time_rules as VenueConfig['turnTimeRules'],
      pacingRules: row.pacing_rules as VenueConfig['pacingRules'],
      tables: row.tables as VenueConfig['tables'],
      combinations: row.combinations as VenueConfig['combinations'],
    },
  };
}

/**
 * The reservations the engine needs for the serviceDates `from` … `to`: every one of those dates
 * that counts for pacing, every live table occupancy around them (the previous day's past-midnight
 * shifts, long turn times), and the seated parties still at their table past their end. One round
 * trip; the window is padded by a day before and three after so that any zone and turn time fit.
 */
export async function loadBookings(conn: DbOrTx, venueId: string, from: string, to: string, now: number): Promise<Booking[]> {
  const lo = new Date(naiveDayStartMs(addDays(from, -1))).toISOString();
  const hi = new Date(naiveDayStartMs(addDays(to, 3))).toISOString();
  const rows = (await conn.execute(sql`
    with ids as (
      select id from reservations
        where venue_id = ${venueId} and service_date between ${from}::date and ${to}::date and status not in ('cancelled', 'no_show')
      union
      select reservation_id from reservation_tables
        where venue_id = ${venueId} and live and during && tstzrange(${lo}::timestamptz, ${hi}::timestamptz)
      union
      select id from reservations
        where venue_id = ${venueId} and status = 'seated' and ends_at <= ${new Date(now).toISOString()}::timestamptz
    )
    select r.id, to_char(r.service_date, 'YYYY-MM-DD') as service_date, r.time, r.party_size, r.status,
      (extract(epoch from r.starts_at) * 1000)::float8 as starts_at,
      (extract(epoch from r.ends_at) * 1000)::float8 as ends_at,
      array(select rt.table_id::text from reservation_tables rt where rt.reservation_id = r.id and rt.live) as table_ids
    from reservations r
    where r.id in (select id from ids)
  `)) as unknown as Row[];
  return rows.map((r) => ({
    id: r.id as string,
    serviceDate: r.service_date as string,
    time: r.time as string,
    partySize: r.party_size as number,
    status: r.status as ReservationStatus,
    startsAt: r.starts_at as number,
    endsAt: r.ends_at as number,
    tableIds: r.table_ids as string[],
  }));
}

/** Whether any enabled pacing rule exists: only then do writes need the per-day pacing lock. */
export function hasPacing(config: VenueConfig): boolean {
  return config.pacingRules.some((r) => r.isEnabled);
}

/**
 * Serialises every write that may change the covers of one venue's serviceDate, so that no pacing
 * block ever exceeds its maxCovers whatever the concurrency (decisions §5). Held until the
 * transaction ends. The first key namespaces the lock; hash collisions only serialise more.
 */
export async function lockPacingDay(conn: DbOrTx, venueId: string, serviceDate: string): Promise<void> {
  await conn.execute(sql`select pg_advisory_xact_lock(hashtext('pacing'), hashtext(${venueId} || ${serviceDate}))`);
}
