import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { readTolerantOfLag } from '../../db/read-replica.js';
import { reservationSourceValues, reservationStatusValues } from '../../db/schema/index.js';
import type { AuthContext } from '../../core/auth-context.js';
import { count, serviceDate, uuid } from '../../core/response-schemas.js';
import { addDays, daysBetween } from '../../lib/local-time.js';
import { getVisibleVenue } from '../venues/venue-service.js';

type Counts<K extends string> = Record<K, number>;

const countsOf = <K extends string>(keys: readonly K[]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, count])) as Record<K, typeof count>);

const summaryFigures = z.object({
  covers: count,
  reservations: count,
  byStatus: countsOf(reservationStatusValues),
  bySource: countsOf(reservationSourceValues),
  noShowRate: z.number().nullable(),
  averagePartySize: z.number().nullable(),
  averageSeatedMinutes: z.number().nullable(),
});

export const summaryReportSchema = z
  .object({
    venueId: uuid,
    from: serviceDate,
    to: serviceDate,
    days: z.array(summaryFigures.extend({ serviceDate })),
    totals: summaryFigures,
  })
  .describe('Covers, reservations, statuses, sources and rates per serviceDate and over the range.');

export interface SummaryFigures {
  covers: number;
  reservations: number;
  byStatus: Counts<(typeof reservationStatusValues)[number]>;
  bySource: Counts<(typeof reservationSourceValues)[number]>;
  noShowRate: number | null;
  averagePartySize: number | null;
  averageSeatedMinutes: number | null;
}

interface SummaryRow {
  service_date: string | null;
  covers: number;
  reservations: number;
  by_status: SummaryFigures['byStatus'];
  by_source: SummaryFigures['bySource'];
  no_show_rate: number | null;
  average_party_size: number | null;
  average_seated_minutes: number | null;
}

/** `jsonb_build_object('a', count(*) filter (where col = 'a'), …)` with every value present, zeros included. */
function countsBy(column: string, values: readonly string[]) {
  return sql.join(
    [
      sql`jsonb_build_object(`,
      sql.join(
        values.map((v) => sql`${v}::text, count(*) filter (where ${sql.identifier(column)} = ${v})::int`),
        sql`, `,
      ),
      sql`)`,
    ],
    sql``,
  );
}

function figuresOf(row: SummaryRow | undefined): SummaryFigures {
  const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Counts<K>;
  return {
    covers: row?.covers ?? 0,
    reservations: row?.reservations ?? 0,
    byStatus: row?.by_status ?? zeros(reservationStatusValues),
    bySource: row?.by_source ?? zeros(reservationSourceValues),
    noShowRate: row?.no_show_rate ?? null,
    averagePartySize: row?.average_party_size ?? null,
    averageSeatedMinutes: row?.average_seated_minutes ?? null,
  };
}

/**
 * GET /reports/summary: per serviceDate of the range (every day, empty ones included) and over the
 * whole range, in one SQL aggregation (grouping sets: each day, then the total):
 * - reservations: every reservation of the day, whatever its status; byStatus and bySource split it;
 * - covers: the party sizes of the reservations that came or are expected (not cancelled, not no_show);
 * - noShowRate: no_show ÷ reservations not cancelled (4 decimals; null without any);
 * - averagePartySize: covers ÷ those reservations (2 decimals; null without any);
 * - averageSeatedMinutes: from seatedAt to the moment the table was freed (released or completed),
 *   over the parties with both instants (1 decimal; null without any).
 */
export async function summaryReport(
  auth: AuthContext,
  q: { venueId: string; from: string; to: string },
): Promise<z.output<typeof summaryReportSchema>> {
  const venue = await getVisibleVenue(auth, q.venueId);
  const rows = (await readTolerantOfLag((conn) =>
    conn.execute(sql`
    select to_char(service_date, 'YYYY-MM-DD') as service_date,
      count(*)::int as reservations,
      coalesce(sum(party_size) filter (where status not in ('cancelled', 'no_show')), 0)::int as covers,
      ${countsBy('status', reservationStatusValues)} as by_status,
      ${countsBy('source', reservationSourceValues)} as by_source,
      round(count(*) filter (where status = 'no_show')::numeric / nullif(count(*) filter (where status <> 'cancelled'), 0), 4)::float8 as no_show_rate,
      round(avg(party_size) filter (where status not in ('cancelled', 'no_show')), 2)::float8 as average_party_size,
      round((avg(extract(epoch from coalesce(freed_at, completed_at) - seated_at))
        filter (where seated_at is not null and coalesce(freed_at, completed_at) is not null) / 60)::numeric, 1)::float8 as average_seated_minutes
    from reservations
    where venue_id = ${venue.id} and service_date between ${q.from}::date and ${q.to}::date
    group by grouping sets ((service_date), ())
  `),
  )) as unknown as SummaryRow[];
  const byDate = new Map(rows.filter((r) => r.service_date !== null).map((r) => [r.service_date!, r]));
  const dates = Array.from({ length: daysBetween(q.from, q.to) + 1 }, (_, i) => addDays(q.from, i));
  return {
    venueId: venue.id,
    from: q.from,
    to: q.to,
    days: dates.map((d) => ({ serviceDate: d, ...figuresOf(byDate.get(d)) })),
    totals: figuresOf(rows.find((r) => r.service_date === null)),
  };
}
