// A restaurant group's history, loaded by SQL (issue 24): one organisation, 200 venues per unit of
// scale, 14 reservations a venue a day over `historyDays` past days and `futureDays` ahead, their
// guests, events (numbered in the stream), and the webhook deliveries of the last 30 days (what
// retention keeps) to four partners per venue. Venues, floors and rules go through the services,
// as the API would write them; the bulk rows are generated in PostgreSQL, in a few statements, so
// that two years of a 200-venue group load in minutes. The result satisfies every constraint and
// `cli check` reports zero.

export interface ScaleSeedOptions {
  /** 1: 200 venues (about 2,000,000 reservations over two years). */
  scale: number;
  /** Past days of history: 730 for two years, 7 for one week. */
  historyDays: number;
  /** Days ahead with bookings (created or confirmed, tables held). */
  futureDays?: number;
  log?: (line: string) => void;
}

export interface ScaleSeed {
  organisationId: string;
  venueIds: string[];
  /** A live key with every scope and no practical rate limit. */
  key: string;
  counts: Record<'venues' | 'guests' | 'reservations' | 'events' | 'deliveries', number>;
}

/** Guests per venue over two years (1,000,000 for 200 venues); fewer on a shorter history. */
const GUESTS_PER_VENUE_TWO_YEARS = 5000;
const TWO_YEARS_DAYS = 730;
/** Partners per venue, each with its own endpoint and an automation on every reservation event. */
const PARTNERS_PER_VENUE = 4;
/** What the daily purge leaves: deliveries concluded in the last 30 days. */
const DELIVERY_RETENTION_DAYS = 30;
const partnerEventTypes = [
  'reservation_created',
  'reservation_confirmed',
  'reservation_cancelled',
  'meal_completed',
  'reservation_no_show',
  'reservation_late',
];

/**
 * The 14 daily bookings of a venue: a time each (lunch and dinner, at most two per 30-minute dinner
 * block, so 40-cover pacing holds) and the k-th table of the venue, so that no two of a day share a
 * table and the exclusion constraint holds whatever the party's turn time.
 */
const dailySlots = [
  '12:00',
  '12:15',
  '12:30',
  '13:00',
  '13:30',
  '14:00',
  '19:00',
  '19:15',
  '19:30',
  '20:00',
  '20:30',
  '21:00',
  '21:30',
  '22:00',
];

const firstNames = [
  'Giulia',
  'Marco',
  'Sofia',
  'Luca',
  'Chiara',
  'Matteo',
  'Anna',
  'Davide',
  'Elena',
  'Paolo',
  'Marta',
  'Andrea',
  'Sara',
  'Franco',
  'Lucia',
  'Pietro',
];
const lastNames = [
  'Rossi',
  'Bianchi',
  'Romano',
  'Colombo',
  'Ricci',
  'Marino',
  'Greco',
  'Bruno',
  'Gallo',
  'Conti',
  'De Luca',
  'Costa',
  'Giordano',
  'Mancini',
  'Rizzo',
  'Lombardi',
];

/** Large tables whose secondary indexes are dropped during the load and built again afterwards (much faster than row by row). */
const bulkTables = ['guests', 'reservations', 'reservation_tables', 'events', 'automation_runs', 'webhook_deliveries'];

export async function seedScaleHistory(options: ScaleSeedOptions): Promise<ScaleSeed> {
  const log = options.log ?? (() => {});
  const futureDays = options.futureDays ?? 14;
  const venueCount = Math.max(1, Math.round(200 * options.scale));
  const guestsPerVenue = Math.max(
    50,
    Math.round((GUESTS_PER_VENUE_TWO_YEARS * (options.historyDays + futureDays)) / (TWO_YEARS_DAYS + futureDays)),
  );
  // Imported here: the database URL is set by the caller before the client module first loads.
  const sql = (await import('../../src/db/client.js')).pool();
  const { createApiKey, createOrganisation } = await import('../../src/services/keys/key-service.js');
  const { createVenue } = await import('../../src/services/venues/venue-service.js');
  const { configureDemoVenue } = await import('../../src/services/venue-config/demo-venue.js');
  const { SigningSecretBox } = await import('../../src/services/webhooks/signing-secrets.js');
  const { processConfig } = await import('../../src/config.js');
  const secrets = new SigningSecretBox(processConfig().secretsKey);

  const started = Date.now();
  const step = async (name: string, run: () => Promise<unknown>) => {
    const t = Date.now();
    await run();
    log(`${name}: ${((Date.now() - t) / 1000).toFixed(1)} s`);
  };

  const org = await createOrganisation('Gruppo Bench', false);
  const { key } = await createApiKey({ organisationId: org.id, kind: 'live', name: 'scale bench', rateLimitPerMinute: 100_000_000 });
  const venueIds: string[] = [];
  await step(`${venueCount} venues configured through the services`, async () => {
    for (let i = 0; i < venueCount; i++) {
      const venue = await createVenue(org.id, { name: `Trattoria ${i + 1}`, timezone: 'Europe/Rome', countryCode: 'IT' });
      await configureDemoVenue(org.id, venue.id);
      venueIds.push(venue.id);
    }
  });
  await step('webhook endpoints and automations', async () => {
    for (const venueId of venueIds) {
      for (let p = 1; p <= PARTNERS_PER_VENUE; p++) {
        const [endpoint] = await sql<{ id: string }[]>`
          insert into webhook_endpoints (organisation_id, venue_id, url, current_secret, previous_secret_expires_at)
          values (${org.id}, ${venueId}, ${`https://partner-${p}.example.com/hooks`}, ${secrets.sealNew().sealed}, now())
          returning id`;
        await sql`
          insert into automations (organisation_id, venue_id, name, event_types, conditions, action)
          values (${org.id}, ${venueId}, ${`Partner ${p}`}, ${partnerEventTypes}::text[],
            ${JSON.stringify({ partySizeMin: null, partySizeMax: null, sources: null })}::jsonb,
            ${JSON.stringify({ type: 'partner_notification', url: null, endpointId: endpoint.id, delayMinutes: 0 })}::jsonb)`;
      }
    }
  });

  const indexes = await sql<{ name: string; definition: string }[]>`
    select indexname as name, indexdef as definition from pg_indexes
    where schemaname = current_schema() and tablename = any(${bulkTables}::text[])
      and indexname not in (select conname from pg_constraint)`;
  await sql.begin(async (tx) => {
    await tx.unsafe(`set local synchronous_commit = off`);
    await tx.unsafe(`set local work_mem = '256MB'`);
    await tx.unsafe(`set local statement_timeout = 0`);
    for (const index of indexes) await tx.unsafe(`drop index "${index.name}"`);
    // The per-row triggers bump each venue's availability version and clear lapsed slot holds: a new
    // database has no holds and no cached availability, so the versions are written once at the end.
    for (const table of ['reservations', 'reservation_tables']) await tx.unsafe(`alter table ${table} disable trigger user`);

    await step(`guests (${guestsPerVenue} a venue)`, () =>
      tx.unsafe(
        `insert into guests (organisation_id, venue_id, phone, phone_national, first_name, last_name, email, allergens, consents, created_at, updated_at)
         select v.organisation_id, v.id, '+3933' || lpad(n::text, 8, '0'), '33' || lpad(n::text, 8, '0'),
           f.names[1 + n % 16], l.names[1 + (n / 16) % 16],
           case when n % 3 = 0 then null else lower(f.names[1 + n % 16]) || '.' || n || '@example.com' end,
           case when n % 11 = 0 then array['gluten'] else array[]::text[] end,
           jsonb_build_object('marketingEmail', n % 4 = 0, 'marketingSms', n % 8 = 0),
           at, at
         from venues v cross join generate_series(0, $1 - 1) n
           cross join (select $2::text[] as names) f cross join (select $3::text[] as names) l
           cross join lateral (select least(now() - interval '1 day', current_date - $4::int + (n * ($4::int + $5::int) / $1) * interval '1 day') as at) t
         where v.organisation_id = $6`,
        [guestsPerVenue, firstNames, lastNames, options.historyDays, futureDays, org.id],
      ),
    );
    await tx.unsafe(`create temp table seed_guests on commit drop as
      select venue_id, id, first_name, last_name, (row_number() over (partition by venue_id order by phone))::int - 1 as n from guests`);
    await tx.unsafe(`create index on seed_guests (venue_id, n)`);
    await tx.unsafe(`create temp table seed_tables on commit drop as
      select venue_id, id, min_seats, max_seats, (row_number() over (partition by venue_id order by name, id))::int - 1 as k
      from floor_tables where deleted_at is null`);
    // Indexed and analysed: without statistics the planner joins 2,000,000 bookings to these by nested loops over a scan.
    await tx.unsafe(`create index on seed_tables (venue_id, k)`);
    await tx.unsafe(`analyze seed_guests`);
    await tx.unsafe(`analyze seed_tables`);

    // Past days are concluded (completed 85 %, cancelled 10 %, no-show 5 %, their tables freed);
    // today is left empty so that no timer finds work; days ahead are created or confirmed.
    await step('reservations', () =>
      tx.unsafe(
        `insert into reservations (organisation_id, venue_id, service_date, time, starts_at, ends_at, party_size, status, table_id, table_assigned,
           source, guest_id, arrived_at, seated_at, freed_at, completed_at, no_show_at, cancelled_at, created_at, updated_at)
         select organisation_id, venue_id, service_date, time, starts_at, ends_at, party_size, status, table_id, true,
           (array['phone', 'voice_agent', 'api', 'api', 'floor'])[1 + h % 5], guest_id,
           case when status = 'completed' then starts_at + interval '5 minutes' end,
           case when status = 'completed' then starts_at + interval '7 minutes' end,
           case when status = 'completed' then ends_at end,
           case when status = 'completed' then ends_at end,
           case when status = 'no_show' then starts_at + interval '45 minutes' end,
           case when status = 'cancelled' then created_at + (starts_at - created_at) / 2 end,
           created_at,
           case status when 'completed' then ends_at when 'no_show' then starts_at + interval '45 minutes'
             when 'cancelled' then created_at + (starts_at - created_at) / 2 else created_at end
         from (
           select s.*, starts_at + make_interval(mins => case when party_size <= 2 then 90 when party_size <= 4 then 105 else 120 end) as ends_at,
             least(now() - interval '1 minute', starts_at - make_interval(days => 1 + h % 20, mins => h % 1440)) as created_at
           from (
             select v.organisation_id, v.id as venue_id, d.day as service_date, slot.time, t.id as table_id, h,
               t.min_seats + h % (t.max_seats - t.min_seats + 1) as party_size,
               (d.day + slot.time::time) at time zone v.timezone as starts_at,
               case when d.day < current_date then (case when h % 20 < 2 then 'cancelled' when h % 20 = 2 then 'no_show' else 'completed' end)
                 else (case when h % 10 < 7 then 'confirmed' else 'created' end) end as status,
               g.id as guest_id
             from venues v
               cross join lateral (select (current_date + o)::date as day from generate_series(-$1::int, $2::int) o where o <> 0) d
               cross join lateral unnest($3::text[]) with ordinality as slot(time, k)
               join seed_tables t on t.venue_id = v.id and t.k = slot.k - 1
               cross join lateral (select (hashtext(v.id::text || d.day::text || slot.k::text) & 2147483647) as h) hash
               join seed_guests g on g.venue_id = v.id and g.n = h % $4
             where v.organisation_id = $5
           ) s
         ) r`,
        [options.historyDays, futureDays, dailySlots, guestsPerVenue, org.id],
      ),
    );
    await step('table occupancy', () =>
      tx.unsafe(
        `insert into reservation_tables (reservation_id, table_id, venue_id, during, live)
         select id, table_id, venue_id, tstzrange(starts_at, ends_at), status in ('created', 'confirmed') from reservations where organisation_id = $1`,
        [org.id],
      ),
    );
    await step('guest counters', () =>
      tx.unsafe(
        `update guests g set visit_count = c.visits, no_show_count = c.no_shows, cancelled_count = c.cancelled, last_visit_at = c.last_visit
         from (select guest_id, count(*) filter (where status = 'completed')::int as visits, count(*) filter (where status = 'no_show')::int as no_shows,
                 count(*) filter (where status = 'cancelled')::int as cancelled, max(completed_at) as last_visit
               from reservations where organisation_id = $1 group by guest_id) c
         where g.id = c.guest_id`,
        [org.id],
      ),
    );

    // Every reservation was created, half the others confirmed, and the past ones concluded; 1 % of
    // the completed ones were late first (a rare type). Each event carries the reservation as of then.
    await step('events (numbered in commit order)', () =>
      tx.unsafe(
        `insert into events (organisation_id, venue_id, type, subject_type, subject_id, data, livemode, actor, published, created_at, dispatched_at)
         select organisation_id, venue_id, type, 'reservation', id,
           jsonb_build_object('reservation', jsonb_build_object(
             'id', id, 'venueId', venue_id, 'serviceDate', service_date, 'time', time,
             'startsAt', to_char(starts_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'endsAt', to_char(ends_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'partySize', party_size, 'status', status_then, 'tableAssigned', true, 'needsAttention', false, 'notes', null,
             'source', source, 'sourceDetail', null, 'externalRef', null, 'guestId', guest_id,
             'updatedAt', to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
             'guest', jsonb_build_object('name', trim(first_name || ' ' || last_name), 'allergies', null, 'allergens', '[]'::jsonb),
             'table', jsonb_build_object('tableId', table_id, 'tableCombinationId', null,
               'tables', jsonb_build_array(jsonb_build_object('id', table_id, 'name', table_name, 'minSeats', min_seats, 'maxSeats', max_seats))))),
           true, '{"kind": "api_key", "name": "scale seed"}'::jsonb, true, at, at
         from (
           select r.*, e.type, e.status_then, e.at, e.ord, g.first_name, g.last_name, t.name as table_name, t.min_seats, t.max_seats
           from reservations r
             join guests g on g.id = r.guest_id
             join floor_tables t on t.id = r.table_id
             cross join lateral (select (hashtext(r.id::text) & 2147483647) as h) hash
             cross join lateral (values
               (1, 'reservation_created', 'created', r.created_at, true),
               (2, 'reservation_confirmed', 'confirmed', r.created_at + (r.starts_at - r.created_at) / 4, r.status <> 'created' and h % 2 = 0),
               (3, 'reservation_cancelled', 'cancelled', r.cancelled_at, r.status = 'cancelled'),
               (4, 'reservation_no_show', 'no_show', r.no_show_at, r.status = 'no_show'),
               (5, 'reservation_late', 'confirmed', r.starts_at + interval '15 minutes', r.status = 'completed' and h % 100 = 0),
               (6, 'meal_completed', 'completed', r.completed_at, r.status = 'completed')
             ) as e(ord, type, status_then, at, happened)
           where r.organisation_id = $1 and e.happened
         ) x`,
        [org.id],
      ),
    );
    // The trigger on events queued them for the sequencer: numbered here at once, in commit order.
    await step('event positions', () =>
      tx.unsafe(
        `with taken as (delete from unsequenced_events where organisation_id = $1 returning created_at, event_id)
         insert into event_positions (organisation_id, position, event_id)
         select $1, row_number() over (order by created_at, event_id), event_id from taken`,
        [org.id],
      ),
    );
    await tx.unsafe(
      `insert into event_stream_heads (organisation_id, position) select $1, coalesce(max(position), 0) from event_positions where organisation_id = $1`,
      [org.id],
    );

    // What retention keeps: the deliveries of the last 30 days, one per partner automation and event;
    // 2 % were discarded after five failed attempts.
    await step('automation runs and webhook deliveries (last 30 days)', async () => {
      await tx.unsafe(
        `insert into automation_runs (automation_id, event_id, created_at)
         select a.id, e.id, e.created_at from events e join automations a on a.venue_id = e.venue_id and e.type = any(a.event_types)
         where e.organisation_id = $1 and e.created_at > now() - make_interval(days => $2)`,
        [org.id, DELIVERY_RETENTION_DAYS],
      );
      await tx.unsafe(
        `insert into webhook_deliveries (organisation_id, venue_id, event_id, event_type, automation_id, run_id, action_index, idempotency_key, destination,
           endpoint_id, url, status, attempts, last_attempt_at, last_response_status, last_error, discard_reason, payload, created_at, updated_at)
         select e.organisation_id, e.venue_id, e.id, e.type, a.id, run.id, 0, 'automation:' || run.id || ':0', 'endpoint',
           w.id, w.url, case when failed then 'discarded' else 'delivered' end, case when failed then 5 else 1 end,
           e.created_at + interval '1 second', case when failed then 503 else 200 end, case when failed then 'HTTP 503' end,
           case when failed then 'max_attempts' end,
           jsonb_build_object('id', 'automation:' || run.id || ':0', 'eventId', e.id, 'type', e.type,
             'createdAt', to_char(e.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'venueId', e.venue_id, 'apiVersion', 'v1',
             'data', e.data, 'automation', jsonb_build_object('name', a.name, 'runId', run.id))::text,
           e.created_at, e.created_at + case when failed then interval '5 hours' else interval '1 second' end
         from automation_runs run
           join events e on e.id = run.event_id
           join automations a on a.id = run.automation_id
           join webhook_endpoints w on w.id = (a.action ->> 'endpointId')::uuid
           cross join lateral (select (hashtext(run.id::text) & 2147483647) % 50 = 0 as failed) f
         where a.organisation_id = $1`,
        [org.id],
      );
    });
    await tx.unsafe(
      `insert into reservation_versions (venue_id, version) select id, 1 from venues where organisation_id = $1
       on conflict (venue_id) do update set version = reservation_versions.version + 1`,
      [org.id],
    );
    for (const table of ['reservations', 'reservation_tables']) await tx.unsafe(`alter table ${table} enable trigger user`);
    await step(`secondary indexes rebuilt (${indexes.length})`, async () => {
      await tx.unsafe(`set local maintenance_work_mem = '1GB'`);
      for (const index of indexes) await tx.unsafe(index.definition);
    });
  });
  // The numbering above left the numbering queue empty but 5 M dead rows long (338 MB at scale 1): the
  // servers' numbering read past them until it ran into the statement timeout, and a plain vacuum keeps
  // the empty pages, which the sweep's look for unnumbered events then reads (88 ms instead of 0.5).
  // Rebuilt to nothing, as a queue that is numbered as it fills never grows.
  // On a connection of its own without the pool's statement timeout: on a loaded machine the analyze
  // of two years ran past it and the load ended without its record, its data committed.
  await step('numbering queue rebuilt, analyze', async () => {
    const conn = await sql.reserve();
    try {
      await conn.unsafe(`set statement_timeout = 0`);
      await conn.unsafe(`vacuum full unsequenced_events`);
      await conn.unsafe(`analyze`);
    } finally {
      await conn.unsafe(`reset statement_timeout`);
      conn.release();
    }
  });

  const [counts] = await sql<ScaleSeed['counts'][]>`
    select (select count(*)::int from venues where organisation_id = ${org.id}) as venues,
      (select count(*)::int from guests where organisation_id = ${org.id}) as guests,
      (select count(*)::int from reservations where organisation_id = ${org.id}) as reservations,
      (select count(*)::int from events where organisation_id = ${org.id}) as events,
      (select count(*)::int from webhook_deliveries where organisation_id = ${org.id}) as deliveries`;
  log(`loaded in ${((Date.now() - started) / 1000).toFixed(0)} s: ${JSON.stringify(counts)}`);
  return { organisationId: org.id, venueIds, key, counts };
}
