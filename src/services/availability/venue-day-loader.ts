import { sql, type SQL } from 'drizzle-orm';
import { renderOnce, runSql, type DbOrTx } from '../../db/client.js';
import { ApiError } from '../../core/errors.js';
import { DEMAND_HISTORY_DAYS, learnDemandCurve, type DemandCurve, type DemandHistoryRow } from '../../lib/availability/demand-curve.js';
import type { Booking, ReservationStatus, VenueConfig } from '../../lib/availability/types.js';
import { BoundedCache } from '../../lib/bounded-cache.js';
import { checkAccess, hasPacing, lockPacingDay, lockVenue, type Access } from './venue-day-locks.js';

/**
 * Loading a venue day for the engine: the hot path of availability and of every booking.
 *
 * - The queries are postgres.js tagged templates, i.e. prepared statements (one round trip,
 *   planned once per connection), where drizzle's `execute` parses, describes and plans each time.
 * - The configuration and the reservations of a day are kept in process memory and reused while
 *   their stamps hold: the configuration's is the venue row's updatedAt and the last transaction
 *   that changed one of its configuration rows, noted by triggers in `venue_config_changes`
 *   (migration 0033); the reservations' is the venue's counter in `reservation_versions`, bumped once by
 *   triggers in every writing transaction (migrations 0012, 0034). The stamps are read on every request:
 *   the reservations come with them when they changed (a CASE skips the loading when they did
 *   not), the configuration in a statement of its own when its stamp moved. So a change committed
 *   by any process is seen by the next request, and a request costs one round trip unless the
 *   configuration changed (which keeps its eight subqueries out of the hot statement's plan). No
 *   transaction reads the configuration after changing it, so what a read keeps is committed
 *   configuration.
 */

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

interface CachedConfig {
  stamp: string;
  config: VenueConfig;
}
interface CachedBookings {
  version: string;
  bookings: Booking[];
}
const configCache = new BoundedCache<CachedConfig>(2000);
const bookingsCache = new BoundedCache<CachedBookings>(2000);

/**
 * The configuration's stamp: the venue row's updatedAt and the transaction that last changed one of
 * its configuration rows (shifts, closures, rules, learned turn times, floor plans, areas, tables,
 * combinations). A transaction id is never reused, so a stamp names one committed configuration.
 */
function configStamp(): SQL {
  return sql`concat_ws('|', v.updated_at, (select changed_by::text from venue_config_changes where venue_id = v.id))`;
}

/**
 * Ends the subquery `s` of the reservations' version: without it PostgreSQL pulls the subquery up
 * into the outer query and copies its expression into every place that names it, so that the
 * version was read three times per statement (seen in its plan).
 */
const onceOnly = sql`offset 0`;

/**
 * The values of the hot statements below (renderOnce), named placeholders: each call gives them
 * (runSql's `values`).
 */
const at = {
  venueId: sql.placeholder('venueId'),
  organisationId: sql.placeholder('organisationId'),
  from: sql.placeholder('from'),
  to: sql.placeholder('to'),
  cachedVersion: sql.placeholder('cachedVersion'),
};

/** The venue's reservation version. */
const reservationsVersion = sql`coalesce((select version from reservation_versions where venue_id = ${at.venueId}), 0)::text`;

function configJson(venueId: string): SQL {
  return sql`json_build_object(
    'shifts', (select coalesce(json_agg(json_build_object('id', s.id, 'daysOfWeek', s.days_of_week, 'startTime', s.start_time,
        'lastSeatingTime', s.last_seating_time, 'endTime', s.end_time, 'validFrom', s.valid_from, 'validTo', s.valid_to,
        'isActive', s.is_active)), '[]') from shifts s where s.venue_id = ${venueId}),
    'closures', (select coalesce(json_agg(json_build_object('from', c."from", 'to', c."to", 'shiftIds', c.shift_ids)), '[]')
      from closures c where c.venue_id = ${venueId}),
    'turnTimeRules', (select coalesce(json_agg(json_build_object('id', r.id, 'shiftId', r.shift_id, 'minPartySize', r.min_party_size,
        'maxPartySize', r.max_party_size, 'durationMinutes', r.duration_minutes)), '[]') from turn_time_rules r where r.venue_id = ${venueId}),
    'learnedTurnTimes', (select l.stats from learned_turn_times l where l.venue_id = ${venueId}),
    'pacingRules', (select coalesce(json_agg(json_build_object('id', p.id, 'shiftId', p.shift_id, 'isEnabled', p.is_enabled,
        'maxCovers', p.max_covers, 'windowMinutes', p.window_minutes)), '[]') from pacing_rules p where p.venue_id = ${venueId}),
    'tables', (select coalesce(json_agg(json_build_object('id', t.id, 'name', t.name, 'areaId', t.area_id, 'areaPosition', a.position,
        'minSeats', t.min_seats, 'maxSeats', t.max_seats, 'isBlocked', t.is_blocked)), '[]')
      from floor_tables t
      join floor_plans fp on fp.id = t.floor_plan_id and fp.is_active
      join areas a on a.id = t.area_id
      where t.venue_id = ${venueId} and t.deleted_at is null),
    'combinations', (select coalesce(json_agg(json_build_object('id', tc.id, 'tableIds', tc.table_ids)), '[]')
      from table_combinations tc
      join floor_plans fp on fp.id = tc.floor_plan_id and fp.is_active
      where tc.venue_id = ${venueId} and tc.deleted_at is null))`;
}

/**
 * The reservations the engine needs for the serviceDates `from` … `to`: those dates and the days
 * either side (pacing of the range; tables held across midnight, turn times of up to a day) except
 * cancelled and no_show, plus every seated party (one still at its table past its end keeps it,
 * whenever it started), each with its live table occupancy. The slot holds of those days come as
 * `created` bookings with their expiresAt (the engine ignores them from then on: docs/reservations.md "Slot holds"),
 * locked to their tables (a hold is never moved: it is booked as held). No SQL comment in the
 * statement: a traced statement's text is compacted only without one (src/lib/sql-summary.ts).
 *
 * Two text values, `;` between items and `,` or `|` between fields (uuids, a date, HH:mm,
 * integers, a status, epoch milliseconds, the table lock as 0 or 1, and for a hold its expiry last: none contains a separator): building and reading them
 * costs a fraction of JSON or of row-by-row results on both sides. Each part is a plain index
 * scan, without joins over the reservations or ORs, so that the generic plan of the prepared
 * statement stays the obvious one (a join here once made it a nested loop over every
 * reservation of the venue). Nothing here depends on the current time: the result only changes
 * with the venue's reservation version (`s.version`), and both are null while it is `cachedVersion`.
 * The days' bounds are computed by PostgreSQL: an ISO string of JavaScript for a day next to
 * 0001-01-01 or 9999-12-31 (years 0 and +010000) is not one PostgreSQL reads.
 */
const dayBookingsColumns = sql`
    case when s.version <> ${at.cachedVersion} then (select coalesce(string_agg(concat_ws(',', r.id, r.service_date, r.time, r.party_size, r.status,
        date_part('epoch', r.starts_at) * 1000, date_part('epoch', r.ends_at) * 1000, r.table_locked::int, date_part('epoch', r.expires_at) * 1000), ';'), '')
      from (
        select id, service_date, time, party_size, status, starts_at, ends_at, table_locked, null::timestamptz as expires_at from reservations
          where venue_id = ${at.venueId} and service_date between ${at.from}::date - 1 and ${at.to}::date + 1 and status not in ('cancelled', 'no_show')
        union all
        select id, service_date, time, party_size, status, starts_at, ends_at, table_locked, null from reservations
          where venue_id = ${at.venueId} and status = 'seated' and service_date not between ${at.from}::date - 1 and ${at.to}::date + 1
        union all
        select id, service_date, time, party_size, 'created', starts_at, ends_at, true, expires_at from availability_holds
          where venue_id = ${at.venueId} and service_date between ${at.from}::date - 1 and ${at.to}::date + 1
      ) r) end as bookings,
    case when s.version <> ${at.cachedVersion} then (select coalesce(string_agg(o.pair, ';'), '')
      from (
        select coalesce(rt.reservation_id, rt.hold_id) || '|' || rt.table_id as pair from reservation_tables rt
          where rt.venue_id = ${at.venueId} and rt.live and rt.during && tstzrange((${at.from}::date - 2)::timestamp at time zone 'UTC', (${at.to}::date + 4)::timestamp at time zone 'UTC')
        union
        select rt.reservation_id || '|' || rt.table_id from reservations r
          join reservation_tables rt on rt.reservation_id = r.id and rt.live
          where r.venue_id = ${at.venueId} and r.status = 'seated'
      ) o) end as occupancy`;

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
    const [id, serviceDate, time, partySize, status, startsAt, endsAt, tableLocked, expiresAt] = line.split(',');
    const booking: Booking = {
      id,
      serviceDate,
      time,
      partySize: Number(partySize),
      status: status as ReservationStatus,
      // float8 seconds × 1000: rounded back to the exact millisecond.
      startsAt: Math.round(Number(startsAt)),
      endsAt: Math.round(Number(endsAt)),
      tableIds: tablesOf.get(id) ?? [],
      tableLocked: tableLocked === '1',
    };
    if (expiresAt !== undefined) booking.expiresAt = Math.round(Number(expiresAt));
    return booking;
  });
}

/** The venue's columns every load reads (venueColumns). */
interface VenueColumns {
  id: string;
  organisation_id: string;
  country_code: string;
  timezone: string;
  slot_interval_minutes: number;
  booking_horizon_days: number;
  min_notice_minutes: number;
  table_optimisation: 'off' | 'on';
  turn_time_source: 'configured' | 'learned';
  stamp: string;
}

interface StateRow extends VenueColumns {
  version?: string;
  bookings?: string | null;
  occupancy?: string | null;
}

interface ConfigRow extends VenueColumns {
  config: Omit<VenueConfig, 'venue'>;
}

const venueColumns = sql`v.id, v.organisation_id, v.country_code, v.timezone, v.slot_interval_minutes, v.booking_horizon_days,
  v.min_notice_minutes, v.table_optimisation, v.turn_time_source, ${configStamp()} as stamp`;

function venueOf(row: VenueColumns): LoadedVenue {
  return { id: row.id, organisationId: row.organisation_id, countryCode: row.country_code, timezone: row.timezone };
}

/**
 * The venue's configuration as it is now, read with its stamp in one snapshot and kept under that
 * stamp: a change committed since the caller's stamp was read is then read again by the next load.
 */
async function loadConfig(conn: DbOrTx, venueId: string): Promise<VenueConfig> {
  const [row] = await runSql<ConfigRow>(
    conn,
    sql`select ${venueColumns}, ${configJson(venueId)} as config from venues v where v.id = ${venueId}`,
  );
  if (!row) throw ApiError.notFound('Venue');
  const config: VenueConfig = {
    venue: {
      timezone: row.timezone,
      slotIntervalMinutes: row.slot_interval_minutes,
      bookingHorizonDays: row.booking_horizon_days,
      minNoticeMinutes: row.min_notice_minutes,
      tableOptimisation: row.table_optimisation === 'on',
      turnTimeSource: row.turn_time_source,
    },
    ...row.config,
  };
  configCache.set(venueId, { stamp: row.stamp, config });
  return config;
}

/**
 * The reservations of the row, or the cached ones it was found equal to. Only what was read
 * outside a transaction is stored: a transaction could see its own uncommitted writes under a
 * version number that a rollback gives back to the next writer.
 */
function bookingsOf(
  key: string | null,
  cached: CachedBookings | undefined,
  row: { version?: string; bookings?: string | null; occupancy?: string | null },
  store: boolean,
): Booking[] {
  if (row.bookings === null || row.bookings === undefined) return cached!.bookings;
  const parsed = parseBookings(row.bookings, row.occupancy ?? '');
  if (key && store) bookingsCache.set(key, { version: row.version!, bookings: parsed });
  return parsed;
}

/** Reservations are cached for single days only: a long range would hold a lot of memory for little reuse. */
function bookingsKey(venueId: string, from: string, to: string): string | null {
  return from === to ? `${venueId} ${from}` : null;
}

/**
 * loadState's statements, rendered once (renderOnce): the venue with its stamps, and
 * with the reservations of the days `from` … `to` unless the cached ones (`cachedVersion`) are current.
 */
const venueWithVersion = sql`
    from venues v
    cross join lateral (select ${reservationsVersion} as version ${onceOnly}) s
    where v.id = ${at.venueId} and v.organisation_id = ${at.organisationId}`;
const stateStatements = {
  venue: renderOnce(sql`select ${venueColumns} ${venueWithVersion}`),
  day: renderOnce(sql`select ${venueColumns}, s.version, ${dayBookingsColumns} ${venueWithVersion}`),
};

/**
 * One statement: the venue, its configuration's stamp, and with `range` the reservations of those
 * days unless the cached ones are current; then the configuration, unless the cached one has that
 * stamp (loadConfig). The cache entries compared are returned with the row: they are what a null
 * column stands for. `store`: whether what was read may be cached (not inside a transaction, see
 * bookingsOf). `committedOnly`: what is read holds no write of the caller's own (outside a
 * transaction, or its first read), so that the reservations may be named by their version
 * (`reservationsKey`).
 */
async function loadState(
  conn: DbOrTx,
  access: Access,
  venueId: string,
  range: { from: string; to: string } | null,
  store: boolean,
  committedOnly = store,
) {
  checkAccess(access, venueId);
  const key = range && bookingsKey(venueId, range.from, range.to);
  const cachedBookings = key ? bookingsCache.get(key) : undefined;
  const [row] = await runSql<StateRow>(conn, range ? stateStatements.day : stateStatements.venue, {
    values: {
      venueId,
      organisationId: access.organisationId,
      from: range?.from,
      to: range?.to,
      cachedVersion: cachedBookings?.version ?? '',
    },
  });
  if (!row) throw ApiError.notFound('Venue');
  const venue = venueOf(row);
  const cachedConfig = configCache.get(venueId);
  const config = cachedConfig?.stamp === row.stamp ? cachedConfig.config : await loadConfig(conn, venueId);
  // Names committed reservations only (see bookingsOf): what may be kept across requests.
  const reservationsKey = range && committedOnly ? `${venue.id}@${row.version}` : undefined;
  return { venue, config, bookings: range ? bookingsOf(key, cachedBookings, row, store) : [], reservationsKey };
}

/**
 * The venue and its whole configuration (shifts, closures, rules, tables and combinations of the
 * active plan). 404 when the key may not see the venue.
 */
export async function loadVenueConfig(conn: DbOrTx, access: Access, venueId: string): Promise<LoadedVenueConfig> {
  const { venue, config } = await loadState(conn, access, venueId, null, false);
  return { venue, config };
}

/**
 * The venue lock (lockVenue), then the venue and its whole configuration as they are once it is held,
 * for a write that reads the configuration. 404 when the key may not see the venue.
 */
export async function lockAndLoadVenueConfig(conn: DbOrTx, access: Access, venueId: string): Promise<LoadedVenueConfig> {
  // Pipelined like lockAndLoadBookingDay: the load runs once the lock is held.
  const [, { venue, config }] = await Promise.all([lockVenue(conn, access, venueId, null), loadState(conn, access, venueId, null, false)]);
  return { venue, config };
}

/**
 * For a booking of `serviceDate`, in its transaction: the venue lock and the pacing lock of the
 * day, then venue, configuration and the day's reservations as they are once the locks are held.
 * Two statements sent together (pipelined): PostgreSQL runs the second, and takes its snapshot,
 * only once the first has its locks. A third when a pacing rule appeared between them.
 */
export async function lockAndLoadBookingDay(conn: DbOrTx, access: Access, venueId: string, serviceDate: string) {
  // The booking's first read: nothing of its own is written yet, so its reservations are committed ones.
  // The demand curve's statement, once a day per venue, is sent with them (it reads history, not the day).
  const [{ pacingLocked }, state, demand] = await Promise.all([
    lockVenue(conn, access, venueId, serviceDate),
    loadState(conn, access, venueId, { from: serviceDate, to: serviceDate }, false, true),
    loadDemandCurve(conn, venueId, Date.now()),
  ]);
  if (!pacingLocked && hasPacing(state.config)) {
    await lockPacingDay(conn, venueId, serviceDate);
    state.bookings = await loadBookings(conn, venueId, serviceDate, serviceDate);
    state.reservationsKey = undefined;
  }
  return { ...state, demand };
}

/** Demand curves by venue and UTC day: learned once a day, from history that the day's bookings do not change. */
const demandCache = new BoundedCache<DemandCurve>(2000);

/**
 * The venue's demand curve (docs/reservations.md "Which table"): its reservations of the
 * DEMAND_HISTORY_DAYS days before today (cancelled ones aside: those parties did not come), by party size
 * and time, per day that had any. Read once per venue and day and kept: the history of past days does
 * not change with today's bookings. A venue without history gets the default curve. Before a
 * booking's own writes, or outside a transaction: what it reads is committed history either way.
 */
export async function loadDemandCurve(conn: DbOrTx, venueId: string, now: number): Promise<DemandCurve> {
  const today = new Date(now).toISOString().slice(0, 10);
  const key = `${venueId} ${today}`;
  const cached = demandCache.get(key);
  if (cached) return cached;
  const history = sql`reservations where venue_id = ${venueId} and status <> 'cancelled'
    and service_date >= ${today}::date - ${DEMAND_HISTORY_DAYS}::int and service_date < ${today}::date`;
  const [row] = await runSql<{ nights: number; rows: string }>(
    conn,
    sql`
    select (select count(distinct service_date)::int from ${history}) as nights,
      (select coalesce(string_agg(g.party_size || ',' || g.time || ',' || g.count, ';'), '')
        from (select party_size, time, count(*) as count from ${history} group by party_size, time) g) as rows`,
  );
  const rows: DemandHistoryRow[] = row.rows
    ? row.rows.split(';').map((line) => {
        const [partySize, time, count] = line.split(',');
        return { partySize: Number(partySize), time, count: Number(count) };
      })
    : [];
  const curve = learnDemandCurve(rows, row.nights);
  demandCache.set(key, curve);
  return curve;
}

/** Venue, configuration and the reservations of the serviceDates `from` … `to`, for reads: one round trip. */
export function loadVenueDay(conn: DbOrTx, access: Access, venueId: string, from: string, to: string) {
  return loadState(conn, access, venueId, { from, to }, true);
}

/** loadBookings' statement, rendered once. */
const bookingsStatement = renderOnce(sql`
    select s.version, ${dayBookingsColumns}
    from (select ${reservationsVersion} as version ${onceOnly}) s`);

/**
 * The reservations of the serviceDates `from` … `to` alone, for a transaction that read the
 * configuration first and then took its locks: read now, in the transaction, unless the version
 * shows the cached ones are still current.
 */
export async function loadBookings(conn: DbOrTx, venueId: string, from: string, to: string): Promise<Booking[]> {
  const key = bookingsKey(venueId, from, to);
  const cached = key ? bookingsCache.get(key) : undefined;
  const [row] = await runSql<{ version: string; bookings: string | null; occupancy: string | null }>(conn, bookingsStatement, {
    values: { venueId, from, to, cachedVersion: cached?.version ?? '' },
  });
  return bookingsOf(key, cached, row, false);
}
