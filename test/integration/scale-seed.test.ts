import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { processConfig } from '../../src/config.js';
import { seedScaleHistory } from '../../bench/support/scale-seed.js';
import { pool } from '../../src/db/client.js';
import { closeQueues } from '../../src/queues/queues.js';
import { checkInvariants, totalViolations } from '../../src/services/invariants/check-invariants.js';
import { useOwnDatabase } from '../support/own-database.js';

// The scale data set of bench/ (npm run bench:seed) at a small size, in a database of its own: the
// bulk load drops and rebuilds indexes and pauses triggers, which no other file should see.
const own = await useOwnDatabase('scale_seed');
const sql = pool();

const historyDays = 40;
let seed: Awaited<ReturnType<typeof seedScaleHistory>>;

beforeAll(async () => {
  seed = await seedScaleHistory({ scale: 0.01, historyDays, futureDays: 14 });
}, 120_000);

afterAll(async () => {
  await closeQueues();
  await sql.end();
  await own.drop();
});

describe('bench:seed (the scale data set)', () => {
  it('loads 14 bookings a venue a day over the history and the days ahead, and what derives from them', async () => {
    expect(seed.counts.venues).toBe(2);
    expect(seed.counts.reservations).toBe(2 * 14 * (historyDays + 14));
    // Created for every one, confirmed for about half, a conclusion for each past one.
    expect(seed.counts.events / seed.counts.reservations).toBeGreaterThan(2);
    expect(seed.counts.events / seed.counts.reservations).toBeLessThan(3);
    expect(seed.counts.deliveries).toBeGreaterThan(0);
  });

  it('satisfies every invariant of cli check', async () => {
    const counts = await checkInvariants({ queuePrefixes: [processConfig().QUEUE_PREFIX] });
    expect(counts).toMatchObject({ overlappingTableOccupants: 0, liveTablesOfFinishedReservations: 0, pacingBlocksOverMaxCovers: 0 });
    expect(totalViolations(counts)).toBe(0);
  });

  it('holds tables only for the bookings still to come, each party fitting its table', async () => {
    const [row] = await sql<{ live_wrong: number; unfit: number; past_open: number }[]>`
      select
        (select count(*)::int from reservation_tables rt join reservations r on r.id = rt.reservation_id
          where rt.live <> (r.status in ('created', 'confirmed'))) as live_wrong,
        (select count(*)::int from reservations r join floor_tables t on t.id = r.table_id
          where r.party_size not between t.min_seats and t.max_seats) as unfit,
        (select count(*)::int from reservations where service_date < current_date and status in ('created', 'confirmed')) as past_open`;
    expect(row).toEqual({ live_wrong: 0, unfit: 0, past_open: 0 });
  });

  it('numbers the events 1..N in creation order, with the stream head at N', async () => {
    const [row] = await sql<
      { n: number; min: number; max: number; distinct_positions: number; out_of_order: number; head: number; unsequenced: number }[]
    >`
      select count(*)::int as n, min(position)::int as min, max(position)::int as max, count(distinct position)::int as distinct_positions,
        (select count(*)::int from (select e.created_at < lag(e.created_at) over (order by p.position) as back
           from event_positions p join events e on e.id = p.event_id) o where back) as out_of_order,
        (select position::int from event_stream_heads where organisation_id = ${seed.organisationId}) as head,
        (select count(*)::int from unsequenced_events) as unsequenced
      from events left join event_positions p on p.event_id = events.id`;
    expect(row).toEqual({
      n: seed.counts.events,
      min: 1,
      max: seed.counts.events,
      distinct_positions: seed.counts.events,
      out_of_order: 0,
      head: seed.counts.events,
      unsequenced: 0,
    });
  });

  it('keeps guest counters equal to their reservations, and only the deliveries retention keeps', async () => {
    const [row] = await sql<{ counters_off: number; old_deliveries: number; undispatched: number }[]>`
      select
        (select count(*)::int from guests g where visit_count <> (select count(*) from reservations r where r.guest_id = g.id and r.status = 'completed')
           or no_show_count <> (select count(*) from reservations r where r.guest_id = g.id and r.status = 'no_show')) as counters_off,
        (select count(*)::int from webhook_deliveries where updated_at < now() - interval '30 days') as old_deliveries,
        (select count(*)::int from events where dispatched_at is null) as undispatched`;
    expect(row).toEqual({ counters_off: 0, old_deliveries: 0, undispatched: 0 });
  });

  it('leaves every index and trigger of the schema in place', async () => {
    const [row] = await sql<{ invalid: number; disabled: number; missing: number }[]>`
      select
        (select count(*)::int from pg_index where not indisvalid) as invalid,
        (select count(*)::int from pg_trigger where tgenabled = 'D') as disabled,
        (select count(*)::int from unnest(array['events_org_type_created_idx', 'guests_venue_search_idx', 'reservations_expected_idx', 'webhook_deliveries_concluded_idx']) as i(name)
           where not exists (select 1 from pg_indexes where indexname = i.name)) as missing`;
    expect(row).toEqual({ invalid: 0, disabled: 0, missing: 0 });
  });
});
