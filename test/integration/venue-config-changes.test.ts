import { describe, expect, it } from 'vitest';
import { db, pool } from '../../src/db/client.js';
import type { VenueConfig } from '../../src/lib/availability/types.js';
import { loadVenueConfig } from '../../src/services/availability/venue-day-loader.js';
import { createTenant } from '../support/harness.js';
import { configureVenue, localDate } from '../support/venue-fixtures.js';

/**
 * A process keeps each venue's configuration in memory and reads it again only when the venue's
 * configuration stamp moved (migration 0033: the last transaction that changed one of its rows, noted
 * by triggers). Each change below is written in plain SQL that leaves every `updated_at` and every row
 * count as it was: a stamp made of counts and latest updates would keep serving the configuration
 * read before it.
 */
async function configuredVenue() {
  const t = await createTenant();
  const fixture = await configureVenue(t.venueId, {
    pacing: [{ maxCovers: 20, windowMinutes: 30 }],
    combinations: [['T2', 'T4']],
  });
  const access = { organisationId: t.organisationId, venueIds: null };
  const load = async (): Promise<VenueConfig> => (await loadVenueConfig(db(), access, t.venueId)).config;
  return { venueId: t.venueId, fixture, load };
}

type Venue = Awaited<ReturnType<typeof configuredVenue>>;

const changes: Array<[string, (v: Venue) => string, (config: VenueConfig) => unknown, unknown]> = [
  [
    'shifts',
    (v) => `update shifts set last_seating_time = '21:00' where venue_id = '${v.venueId}'`,
    (c) => c.shifts[0].lastSeatingTime,
    '21:00',
  ],
  [
    'closures',
    (v) =>
      `insert into closures (venue_id, "from", "to", updated_at) values ('${v.venueId}', '${localDate(3)}', '${localDate(3)}', '2000-01-01')`,
    (c) => c.closures.length,
    1,
  ],
  [
    'turn_time_rules',
    (v) => `update turn_time_rules set duration_minutes = 75 where venue_id = '${v.venueId}' and min_party_size = 1`,
    (c) => c.turnTimeRules.find((r) => r.minPartySize === 1)?.durationMinutes,
    75,
  ],
  ['pacing_rules', (v) => `update pacing_rules set max_covers = 12 where venue_id = '${v.venueId}'`, (c) => c.pacingRules[0].maxCovers, 12],
  ['floor_plans', (v) => `update floor_plans set is_active = false where venue_id = '${v.venueId}'`, (c) => c.tables.length, 0],
  ['areas', (v) => `update areas set position = 5 where venue_id = '${v.venueId}'`, (c) => c.tables[0].areaPosition, 5],
  [
    'floor_tables',
    (v) => `update floor_tables set is_blocked = true where id = '${v.fixture.tableIds.T4}'`,
    (c) => c.tables.find((t) => t.name === 'T4')?.isBlocked,
    true,
  ],
  ['table_combinations', (v) => `delete from table_combinations where venue_id = '${v.venueId}'`, (c) => c.combinations.length, 0],
  [
    'learned_turn_times',
    (v) =>
      `insert into learned_turn_times (venue_id, stats, learned_for_date, updated_at) values ('${v.venueId}', '{"cells":[]}', '${localDate(0)}', '2000-01-01')`,
    (c) => c.learnedTurnTimes,
    { cells: [] },
  ],
];

describe('the configuration a process keeps in memory', () => {
  it.each(changes)('is read again after a change of %s that keeps its updated_at and row count', async (_table, change, read, expected) => {
    const venue = await configuredVenue();
    const before = read(await venue.load());
    expect(before).not.toEqual(expected);
    // Read twice: the second read is served from memory (the stamp did not move).
    expect(read(await venue.load())).toEqual(before);
    await pool().unsafe(change(venue));
    expect(read(await venue.load())).toEqual(expected);
  });

  it('stays as committed when a change rolls back, and a later commit is read (a stamp is never reused)', async () => {
    const venue = await configuredVenue();
    expect((await venue.load()).shifts[0].lastSeatingTime).toBe('22:00');
    await pool()
      .begin(async (tx) => {
        await tx.unsafe(`update shifts set last_seating_time = '20:00' where venue_id = '${venue.venueId}'`);
        throw new Error('roll back');
      })
      .catch(() => {});
    expect((await venue.load()).shifts[0].lastSeatingTime).toBe('22:00');
    await pool().unsafe(`update shifts set last_seating_time = '21:30' where venue_id = '${venue.venueId}'`);
    expect((await venue.load()).shifts[0].lastSeatingTime).toBe('21:30');
  });

  it('notes a transaction that changes many rows of a venue once', async () => {
    const venue = await configuredVenue();
    const noted = () =>
      pool().unsafe<Array<{ changedBy: string }>>(`select changed_by::text as "changedBy" from venue_config_changes where venue_id = $1`, [
        venue.venueId,
      ]);
    const [{ changedBy: before }] = await noted();
    const changedBy = await pool().begin(async (tx) => {
      const noteRow = async () =>
        (await tx.unsafe<Array<{ ctid: string }>>(`select ctid::text from venue_config_changes where venue_id = $1`, [venue.venueId]))[0]
          .ctid;
      await tx.unsafe(`update shifts set end_time = '23:45' where venue_id = '${venue.venueId}'`);
      const noted = await noteRow();
      // Three tables and an area changed after it: the note is left as this transaction wrote it (no new row version).
      await tx.unsafe(`update floor_tables set max_seats = max_seats + 1 where venue_id = '${venue.venueId}'`);
      await tx.unsafe(`update areas set position = position where venue_id = '${venue.venueId}'`);
      expect(await noteRow()).toBe(noted);
      const [{ xid }] = await tx.unsafe<Array<{ xid: string }>>('select pg_current_xact_id()::text as xid');
      return xid;
    });
    expect(before).not.toBe(changedBy);
    expect((await noted())[0].changedBy).toBe(changedBy);
  });
});
