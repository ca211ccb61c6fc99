import type { PendingQuery, Row, Sql } from 'postgres';
import type { DbOrTx } from '../../db/client.js';
import type { AuthContext } from '../../http/auth.js';
import { ApiError } from '../../http/errors.js';
import type { Booking, ReservationStatus, VenueConfig } from '../../lib/availability/types.js';
import { naiveDayStartMs } from '../../lib/local-time.js';

const DAY_MS = 86_400_000;

/**
 * Loading a venue day for the engine. These queries are the hot path of availability and of every
 * booking, so they are written for postgres.js directly: its tagged templates are prepared
 * statements (one round trip, planned once per connection), where drizzle's `execute` parses,
 * describes and plans each time.
 */

/** The postgres.js client behind a drizzle handle: the pool, or the connection of the open transaction. */
function clientOf(conn: DbOrTx): Sql {
  return (conn._.session as unknown as { client: Sql }).client;
}

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

type Access = Pick<AuthContext, 'organisationId' | 'venueIds'>;

/**
 * What the configuration's freshness is judged by: the venue row's version and, per configuration
 * table, the row count and the latest updatedAt of the venue's rows (a deletion lowers the count,
 * any insert or update raises the latest updatedAt).
 */
function stampOf(sql: Sql): PendingQuery<Row[]> {
  return sql`concat_ws('|', v.updated_at,
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from shifts where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from closures where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from turn_time_rules where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from pacing_rules where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from floor_plans where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from areas where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from floor_tables where venue_id = v.id),
    (select count(*) || ',' || coalesce(max(updated_at)::text, '') from table_combinations where venue_id = v.id))`;
}

/**
 * The reservations the engine needs for the serviceDates `from` … `to`: those dates and the days
 * either side (pacing of the range; tables held across midnight, turn times of up to a day) except
 * cancelled and no_show, plus the seated parties still at their table past their end, whenever
 * they started; and the live occupancy rows of those reservations over the same span.
 *
 * Two text values, `;` between items and `,` or `|` between fields (uuids, a date, HH:mm,
 * integers, a status, epoch milliseconds: none contains a separator): building and reading them
 * costs a fraction of JSON or of row-by-row results on both sides. Each part is a plain index
 * scan, without joins or ORs, so that the generic plan of the prepared statement stays the
 * obvious one (a join here once made it a nested loop over every reservation of the venue).
 */
function bookingsText(sql: Sql, venueId: string, from: string, to: string, now: number): PendingQuery<Row[]> {
  const nowIso = new Date(now).toISOString();
  const lo = new Date(naiveDayStartMs(from) - 2 * DAY_MS).toISOString();
  const hi = new Date(naiveDayStartMs(to) + 4 * DAY_MS).toISOString();
  return sql`
    (select coalesce(string_agg(concat_ws(',', r.id, r.service_date, r.time, r.party_size, r.status,
        date_part('epoch', r.starts_at) * 1000, date_part('epoch', r.ends_at) * 1000), ';'), '')
      from (
        select * from reservations
          where venue_id = ${venueId} and service_date between ${from}::date - 1 and ${to}::date + 1 and status not in ('cancelled', 'no_show')
        union all
        select * from reservations
          where venue_id = ${venueId} and status = 'seated' and ends_at <= ${nowIso}::timestamptz
            and service_date not between ${from}::date - 1 and ${to}::date + 1
      ) r) as bookings,
    (select coalesce(string_agg(o.pair, ';'), '')
      from (
        select rt.reservation_id || '|' || rt.table_id as pair from reservation_tables rt
          where rt.venue_id = ${venueId} and rt.live and rt.during && tstzrange(${lo}::timestamptz, ${hi}::timestamptz)
        union
        select rt.reservation_id || '|' || rt.table_id from reservations r
          join reservation_tables rt on rt.reservation_id = r.id and rt.live
          where r.venue_id = ${venueId} and r.status = 'seated' and r.ends_at <= ${nowIso}::timestamptz
      ) o) as occupancy`;
}

function parseBookings(bookings: string, occupancy: string): Booking[] {
  const tablesOf = new Map<string, string[]>();
  if (occupancy) {
    for (const pair of occupancy.split(';')) {
      const [reservationId, tableId] = pair.split('|');
      const list = tablesOf.get(reservationId);
      if (list) list.push(tableId);
      else tablesOf.set(reservationId, [tableId]);
    }
  }
  if (!bookings) return [];
  return bookings.split(';').map((line) => {
    const [id, serviceDate, time, partySize, status, startsAt, endsAt] = line.split(',');
    return {
      id,
      serviceDate,
      time,
      partySize: Number(partySize),
      status: status as ReservationStatus,
      // float8 seconds × 1000: rounded back to the exact millisecond.
      startsAt: Math.round(Number(startsAt)),
      endsAt: Math.round(Number(endsAt)),
      tableIds: tablesOf.get(id) ?? [],
    };
  });
}

interface VenueRowFields {
  id: string;
  organisation_id: string;
  country_code: string;
  timezone: string;
  slot_interval_minutes: number;
  booking_horizon_days: number;
  min_notice_minutes: number;
  stamp: string;
}

function venueOf(row: VenueRowFields): LoadedVenue {
  return { id: row.id, organisationId: row.organisation_id, countryCode: row.country_code, timezone: row.timezone };
}

// Configurations are kept per process while their stamp holds; the stamp is read on every request,
// so a change made through any process is seen at once. Bounded: cleared when full.
const maxCachedVenues = 2000;
const configCache = new Map<string, { stamp: string; config: VenueConfig }>();

async function configFor(sql: Sql, row: VenueRowFields): Promise<VenueConfig> {
  const cached = configCache.get(row.id);
  if (cached && cached.stamp === row.stamp) return cached.config;
  const [c] = await sql`
    select
      (select coalesce(json_agg(json_build_object('id', s.id, 'daysOfWeek', s.days_of_week, 'startTime', s.start_time,
          'lastSeatingTime', s.last_seating_time, 'endTime', s.end_time, 'validFrom', s.valid_from, 'validTo', s.valid_to,
          'isActive', s.is_active)), '[]') from shifts s where s.venue_id = ${row.id}) as shifts,
      (select coalesce(json_agg(json_build_object('from', c."from", 'to', c."to", 'shiftIds', c.shift_ids)), '[]')
        from closures c where c.venue_id = ${row.id}) as closures,
      (select coalesce(json_agg(json_build_object('id', r.id, 'shiftId', r.shift_id, 'minPartySize', r.min_party_size,
          'maxPartySize', r.max_party_size, 'durationMinutes', r.duration_minutes)), '[]') from turn_time_rules r where r.venue_id = ${row.id}) as turn_time_rules,
      (select coalesce(json_agg(json_build_object('id', p.id, 'shiftId', p.shift_id, 'isEnabled', p.is_enabled,
          'maxCovers', p.max_covers, 'windowMinutes', p.window_minutes)), '[]') from pacing_rules p where p.venue_id = ${row.id}) as pacing_rules,
      (select coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'areaId', t.area_id, 'areaPosition', a.position,
          'minSeats', t.min_seats, 'maxSeats', t.max_seats, 'isBlocked', t.is_blocked)), '[]')
        from floor_tables t
        join floor_plans fp on fp.id = t.floor_plan_id and fp.is_active
        join areas a on a.id = t.area_id
        where t.venue_id = ${row.id} and t.deleted_at is null) as tables,
      (select coalesce(json_agg(json_build_object('id', tc.id, 'tableIds', tc.table_ids)), '[]')
        from table_combinations tc
        join floor_plans fp on fp.id = tc.floor_plan_id and fp.is_active
        where tc.venue_id = ${row.id} and tc.deleted_at is null) as combinations
  `;
  const config: VenueConfig = {
    venue: {
      timezone: row.timezone,
      slotIntervalMinutes: row.slot_interval_minutes,
      bookingHorizonDays: row.booking_horizon_days,
      minNoticeMinutes: row.min_notice_minutes,
    },
    shifts: c.shifts,
    closures: c.closures,
    turnTimeRules: c.turn_time_rules,
    pacingRules: c.pacing_rules,
    tables: c.tables,
    combinations: c.combinations,
  };
  if (configCache.size >= maxCachedVenues) configCache.clear();
  configCache.set(row.id, { stamp: row.stamp, config });
  return config;
}

function checkAccess(access: Access, venueId: string): void {
  if (access.venueIds !== null && !access.venueIds.includes(venueId)) throw ApiError.notFound('Venue');
}

const venueColumns = (sql: Sql) =>
  sql`v.id, v.organisation_id, v.country_code, v.timezone, v.slot_interval_minutes, v.booking_horizon_days, v.min_notice_minutes, ${stampOf(sql)} as stamp`;

/**
 * The venue and its whole configuration (shifts, closures, rules, tables and combinations of the
 * active plan). `lock`: FOR SHARE on the venue row, so that a floor or configuration change
 * (which takes FOR NO KEY UPDATE on it) waits for the writes that read the configuration, and
 * the other way round. 404 when the key may not see the venue.
 */
export async function loadVenueConfig(conn: DbOrTx, access: Access, venueId: string, lock = false): Promise<LoadedVenueConfig> {
  checkAccess(access, venueId);
  const sql = clientOf(conn);
  const [row] = await sql<VenueRowFields[]>`
    select ${venueColumns(sql)} from venues v
    where v.id = ${venueId} and v.organisation_id = ${access.organisationId}
    ${lock ? sql`for share of v` : sql``}`;
  if (!row) throw ApiError.notFound('Venue');
  return { venue: venueOf(row), config: await configFor(sql, row) };
}

/** The bookings of loadVenueDay alone, for a transaction that read the configuration first and then took its locks. */
export async function loadBookings(conn: DbOrTx, venueId: string, from: string, to: string, now: number): Promise<Booking[]> {
  const sql = clientOf(conn);
  const [row] = await sql`select ${bookingsText(sql, venueId, from, to, now)}`;
  return parseBookings(row.bookings, row.occupancy);
}

/**
 * Everything the engine needs for the serviceDates `from` … `to`, for reads: venue, stamp and
 * reservations in one round trip; the configuration itself only when the cached one is stale.
 */
export async function loadVenueDay(conn: DbOrTx, access: Access, venueId: string, from: string, to: string, now: number) {
  checkAccess(access, venueId);
  const sql = clientOf(conn);
  const [row] = await sql<(VenueRowFields & { bookings: string; occupancy: string })[]>`
    select ${venueColumns(sql)}, ${bookingsText(sql, venueId, from, to, now)}
    from venues v
    where v.id = ${venueId} and v.organisation_id = ${access.organisationId}`;
  if (!row) throw ApiError.notFound('Venue');
  return { venue: venueOf(row), config: await configFor(sql, row), bookings: parseBookings(row.bookings, row.occupancy) };
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
  const sql = clientOf(conn);
  await sql`select pg_advisory_xact_lock(hashtext('pacing'), hashtext(${venueId} || ${serviceDate}))`;
}
