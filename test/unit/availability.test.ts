import { describe, expect, it } from 'vitest';
import { learnDemandCurve, type DemandCurve } from '../../src/lib/availability/demand-curve.js';
import { Occupancy } from '../../src/lib/availability/occupancy.js';
import type { Booking, ReservationStatus, VenueConfig } from '../../src/lib/availability/types.js';
import { VenueDay, chooseTurnTimeRule, type EvaluateOptions } from '../../src/lib/availability/venue-day.js';
import { localToInstant } from '../../src/lib/local-time.js';

const zone = 'Europe/Rome';
// Wednesday 1 July 2026, 10:00 in Rome.
const now = Date.parse('2026-07-01T08:00:00Z');
const day = '2026-07-02'; // Thursday

function baseConfig(overrides: Partial<VenueConfig> = {}): VenueConfig {
  return {
    venue: { timezone: zone, slotIntervalMinutes: 15, bookingHorizonDays: 90, minNoticeMinutes: 0, tableOptimisation: false },
    shifts: [
      {
        id: 'lunch',
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        startTime: '12:00',
        lastSeatingTime: '14:00',
        endTime: '15:00',
        validFrom: null,
        validTo: null,
        isActive: true,
      },
      // Past midnight: the 00:00–01:00 part still belongs to the serviceDate it started on. No dinner on Sundays.
      {
        id: 'dinner',
        daysOfWeek: [1, 2, 3, 4, 5, 6],
        startTime: '19:00',
        lastSeatingTime: '00:15',
        endTime: '01:00',
        validFrom: null,
        validTo: null,
        isActive: true,
      },
      {
        id: 'old-brunch',
        daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
        startTime: '09:00',
        lastSeatingTime: '10:30',
        endTime: '11:00',
        validFrom: null,
        validTo: '2026-06-30',
        isActive: true,
      },
    ],
    closures: [
      { from: '2026-08-15', to: '2026-08-15', shiftIds: [] },
      { from: '2026-08-20', to: '2026-08-20', shiftIds: ['lunch'] },
    ],
    turnTimeRules: [
      { id: 'all-small', shiftId: null, minPartySize: 1, maxPartySize: 4, durationMinutes: 90 },
      { id: 'all-large', shiftId: null, minPartySize: 5, maxPartySize: 12, durationMinutes: 120 },
      { id: 'dinner-couples', shiftId: 'dinner', minPartySize: 1, maxPartySize: 2, durationMinutes: 75 },
    ],
    pacingRules: [
      { id: 'lunch-30', shiftId: 'lunch', isEnabled: true, maxCovers: 8, windowMinutes: 30 },
      { id: 'lunch-off', shiftId: 'lunch', isEnabled: false, maxCovers: 1, windowMinutes: 15 },
    ],
    tables: [
      { id: 'T1', name: 'T1', areaId: 'A', areaPosition: 0, minSeats: 2, maxSeats: 2, isBlocked: false },
      { id: 'T2', name: 'T2', areaId: 'A', areaPosition: 0, minSeats: 2, maxSeats: 4, isBlocked: false },
      { id: 'T3', name: 'T3', areaId: 'A', areaPosition: 0, minSeats: 4, maxSeats: 6, isBlocked: false },
      { id: 'B1', name: 'B1', areaId: 'B', areaPosition: 1, minSeats: 2, maxSeats: 4, isBlocked: false },
      { id: 'B2', name: 'B2', areaId: 'B', areaPosition: 1, minSeats: 1, maxSeats: 2, isBlocked: true },
    ],
    combinations: [{ id: 'T1+T2', tableIds: ['T1', 'T2'] }],
    ...overrides,
  };
}

const local = (date: string, hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return localToInstant(zone, date, h * 60 + m);
};

let nextId = 0;
function booking(
  time: string,
  partySize: number,
  tableIds: string[],
  status: ReservationStatus = 'confirmed',
  minutes = 90,
  date = day,
): Booking {
  const [h, m] = time.split(':').map(Number);
  const minute = h * 60 + m < 12 * 60 ? h * 60 + m + 1440 : h * 60 + m;
  const startsAt = localToInstant(zone, date, minute);
  return { id: `b${nextId++}`, serviceDate: date, time, partySize, status, startsAt, endsAt: startsAt + minutes * 60_000, tableIds };
}

function run(input: {
  date?: string;
  time: string;
  party: number;
  bookings?: Booking[];
  config?: VenueConfig;
  now?: number;
  options?: EvaluateOptions;
}) {
  const d = new VenueDay(input.config ?? baseConfig(), input.date ?? day, input.bookings ?? [], input.now ?? now);
  const e = d.evaluate(input.time, input.party, input.options);
  return e.available
    ? { available: true as const, seating: e.seatings[0].id, proposal: d.proposalOf(e) }
    : { available: false as const, reason: e.reason };
}

describe('reasons, in the order of docs/reservations.md', () => {
  it.each([
    ['closed day', { date: '2026-08-15', time: '20:00', party: 2 }, 'closed'],
    ['closed day beats a party without a rule', { date: '2026-08-15', time: '20:00', party: 40 }, 'closed'],
    ['closed shift', { date: '2026-08-20', time: '12:30', party: 2 }, 'closed'],
    ['between shifts', { time: '16:00', party: 2 }, 'no_shift'],
    ['before the first shift start', { time: '11:45', party: 2 }, 'no_shift'],
    ['no dinner on Sundays', { date: '2026-07-05', time: '20:00', party: 2 }, 'no_shift'],
    ['shift no longer valid', { time: '09:30', party: 2 }, 'no_shift'],
    ['date before today', { date: '2026-06-30', time: '20:00', party: 2 }, 'no_shift'],
    ['beyond the booking horizon', { date: '2026-09-30', time: '20:00', party: 2 }, 'no_shift'],
    ['earlier than now today', { date: '2026-07-01', time: '12:00', party: 2, now: Date.parse('2026-07-01T10:30:00Z') }, 'no_shift'],
    [
      'earlier than now + minNoticeMinutes',
      {
        date: '2026-07-01',
        time: '12:00',
        party: 2,
        config: baseConfig({
          venue: { timezone: zone, slotIntervalMinutes: 15, bookingHorizonDays: 90, minNoticeMinutes: 150, tableOptimisation: false },
        }),
      },
      'no_shift',
    ],
    ['after the last seating', { time: '14:15', party: 2 }, 'after_last_seating'],
    ['after the last seating, past midnight', { time: '00:30', party: 2 }, 'after_last_seating'],
    ['after the last seating beats a party without a rule', { time: '14:15', party: 40 }, 'after_last_seating'],
    ['no turn-time rule for the party', { time: '20:00', party: 13 }, 'no_turn_time_rule'],
    ['no table large enough', { time: '20:00', party: 10 }, 'no_table'],
    ['only a blocked table fits', { time: '20:00', party: 1 }, 'no_table'],
    ['pacing block full', { time: '12:15', party: 3, bookings: [booking('12:00', 4, ['T2']), booking('12:10', 2, ['T1'])] }, 'pacing_full'],
    [
      'party alone above maxCovers',
      {
        time: '12:00',
        party: 5,
        config: baseConfig({ pacingRules: [{ id: 'p', shiftId: 'lunch', isEnabled: true, maxCovers: 4, windowMinutes: 30 }] }),
      },
      'pacing_full',
    ],
    [
      'no table beats pacing',
      { time: '12:15', party: 6, bookings: [booking('12:00', 4, ['T2']), booking('12:05', 4, ['T3'])] },
      'no_table',
    ],
  ])('%s', (_name, input, reason) => {
    expect(run(input)).toMatchObject({ available: false, reason });
  });

  it('accepts the boundary cases', () => {
    expect(run({ date: '2026-09-29', time: '20:00', party: 2 }).available).toBe(true); // exactly bookingHorizonDays ahead
    const config = baseConfig({
      venue: { timezone: zone, slotIntervalMinutes: 15, bookingHorizonDays: 90, minNoticeMinutes: 120, tableOptimisation: false },
    });
    expect(run({ date: '2026-07-01', time: '12:00', party: 2, config }).available).toBe(true); // exactly now + notice
    expect(run({ time: '14:00', party: 2 }).available).toBe(true); // the last seating itself
    expect(run({ time: '12:00', party: 8 }).available).toBe(false); // no table for 8
    expect(run({ time: '12:15', party: 2, bookings: [booking('12:00', 4, ['T2']), booking('12:10', 2, ['B1'])] }).available).toBe(true); // exactly maxCovers
  });

  it('skips the booking window for walk-ins but keeps the rest', () => {
    const late = Date.parse('2026-07-02T11:00:00Z'); // 13:00 in Rome
    expect(run({ time: '12:30', party: 2, now: late }).available).toBe(false);
    expect(run({ time: '12:30', party: 2, now: late, options: { ignoreBookingWindow: true } }).available).toBe(true);
    expect(run({ time: '16:00', party: 2, now: late, options: { ignoreBookingWindow: true } })).toMatchObject({ reason: 'no_shift' });
  });

  it('answers no_shift for a time that would end after 9999-12-31, even without the booking window', () => {
    const options = { ignoreBookingWindow: true };
    expect(run({ date: '9999-12-31', time: '19:00', party: 2, options }).available).toBe(true);
    expect(run({ date: '9999-12-31', time: '23:45', party: 3, options })).toMatchObject({ available: false, reason: 'no_shift' });
    expect(run({ date: '9999-12-31', time: '00:15', party: 2, options })).toMatchObject({ available: false, reason: 'no_shift' });
  });
});

describe('turn-time rule choice', () => {
  const rules = baseConfig().turnTimeRules;
  it.each([
    ['dinner', 2, 'dinner-couples'],
    ['lunch', 2, 'all-small'],
    ['dinner', 3, 'all-small'],
    ['dinner', 12, 'all-large'],
    ['dinner', 13, undefined],
  ])('%s, party %i → %s', (shift, party, id) => {
    expect(chooseTurnTimeRule(rules, shift, party)?.id).toBe(id);
  });

  it('prefers the narrowest covering rule of the same kind', () => {
    const overlapping = [...rules, { id: 'dinner-wide', shiftId: 'dinner', minPartySize: 1, maxPartySize: 8, durationMinutes: 100 }];
    expect(chooseTurnTimeRule(overlapping, 'dinner', 2)?.id).toBe('dinner-couples');
    expect(chooseTurnTimeRule(overlapping, 'dinner', 3)?.id).toBe('dinner-wide');
  });
});

describe('table choice', () => {
  it.each([
    ['best fit: the smallest maxSeats', 2, [], 'T1'],
    ['smallest maxSeats, then area position', 3, [], 'T2'],
    ['next area when the first is taken', 3, ['T2'], 'B1'],
    ['a blocked table is skipped', 2, ['T1'], 'T2'],
    ['single table before a combination of the same size', 5, [], 'T3'],
    ['combination only when needed', 5, ['T3'], 'T1+T2'],
    ['a combination is not free when one of its tables is taken', 6, ['T3', 'T1'], null],
    ['a combination seats from the largest minSeats', 1, [], null],
  ])('%s', (_name, party, taken, expected) => {
    const bookings = taken.map((id) => booking('20:00', 2, [id], 'confirmed', 180));
    const result = run({ time: '20:00', party, bookings });
    if (expected === null) expect(result).toMatchObject({ available: false, reason: 'no_table' });
    else expect(result).toMatchObject({ available: true, seating: expected });
  });

  it('breaks ties by table name, deterministically whatever the input order', () => {
    const tables = ['T9', 'T10', 'T1'].map((name) => ({
      id: `id-${name}`,
      name,
      areaId: 'A',
      areaPosition: 0,
      minSeats: 1,
      maxSeats: 2,
      isBlocked: false,
    }));
    for (const order of [tables, [...tables].reverse()]) {
      expect(run({ time: '20:00', party: 2, config: baseConfig({ tables: order, combinations: [] }) })).toMatchObject({ seating: 'id-T1' });
    }
  });

  it('gives seats = maxSeats of the chosen seating', () => {
    expect(run({ time: '20:00', party: 5, bookings: [booking('20:00', 2, ['T3'])] })).toMatchObject({ proposal: { seats: 6 } });
    expect(run({ time: '20:00', party: 3 })).toMatchObject({ proposal: { seats: 4 } });
  });

  it('keeps a preferred seating when it still fits and is free', () => {
    expect(run({ time: '20:00', party: 2, options: { preferredSeatingId: 'B1' } })).toMatchObject({ seating: 'B1' });
    expect(run({ time: '20:00', party: 2, options: { preferredSeatingId: 'T3' } })).toMatchObject({ seating: 'T1' });
  });

  it('checks an explicitly requested seating only', () => {
    expect(run({ time: '20:00', party: 2, options: { requestedSeatingId: 'B1' } })).toMatchObject({ seating: 'B1' });
    expect(run({ time: '20:00', party: 2, options: { requestedSeatingId: 'B2' } })).toMatchObject({ reason: 'table_blocked' });
    expect(run({ time: '20:00', party: 2, options: { requestedSeatingId: 'T3' } })).toMatchObject({ reason: 'no_table' });
    expect(run({ time: '20:00', party: 2, bookings: [booking('19:30', 2, ['B1'])], options: { requestedSeatingId: 'B1' } })).toMatchObject({
      reason: 'no_table',
    });
  });

  it('skips the table stage for a reservation that will have no table, pacing still applies', () => {
    const d = new VenueDay(baseConfig(), day, [booking('12:00', 6, [])], now);
    expect(d.evaluate('20:00', 10, { withoutTable: true })).toMatchObject({ available: true, seatings: [] });
    expect(d.evaluate('12:10', 4, { withoutTable: true })).toMatchObject({ available: false, reason: 'pacing_full' });
  });

  it('judges one seating over a given interval (an explicit change of table)', () => {
    const other = booking('20:00', 2, ['B1']);
    const d = new VenueDay(baseConfig(), day, [other], now);
    const start = local(day, '20:30');
    expect(d.seatingVerdict('T2', 3, start, start + 3_600_000, 'me')).toBe('ok');
    expect(d.seatingVerdict('B1', 3, start, start + 3_600_000, 'me')).toBe('no_table');
    expect(d.seatingVerdict('B1', 3, start, start + 3_600_000, other.id)).toBe('ok');
    expect(d.seatingVerdict('B2', 1, start, start + 3_600_000, 'me')).toBe('table_blocked');
    expect(d.seatingVerdict('T1', 3, start, start + 3_600_000, 'me')).toBe('no_table');
  });

  it('lists every free fitting seating in choice order when asked', () => {
    const d = new VenueDay(baseConfig(), day, [], now);
    const e = d.evaluate('20:00', 4, { allSeatings: true });
    expect(e.available && e.seatings.map((s) => s.id)).toEqual(['T2', 'B1', 'T3', 'T1+T2']);
  });
});

describe('which table a new party takes among equals: packing (docs/reservations.md "Which table")', () => {
  const fours = ['P1', 'P2', 'P3'].map((id) => ({
    id,
    name: id,
    areaId: 'A',
    areaPosition: 0,
    minSeats: 2,
    maxSeats: 4,
    isBlocked: false,
  }));
  const config = baseConfig({ tables: fours, combinations: [], pacingRules: [] });
  // Parties of 3 at 20:00 take 90 minutes (20:00–21:30); the venue's shortest turn is 75 minutes.
  it.each([
    ['every table free: the plan order', [], 'P1'],
    ['end to end after a party leaving at 20:00', [['18:30', 'P2']], 'P2'],
    ['end to end before a party arriving at 21:30', [['21:30', 'P3']], 'P3'],
    ['a table left with a dead gap (a party leaving at 19:30, 30 minutes idle) loses to a free one', [['18:00', 'P1']], 'P2'],
    [
      'packed on both sides beats packed on one',
      [
        ['18:30', 'P2'],
        ['18:30', 'P3'],
        ['21:30', 'P3'],
      ],
      'P3',
    ],
    [
      'a dead gap of 60 minutes after loses to an open side',
      [
        ['22:30', 'P1'],
        ['18:30', 'P2'],
      ],
      'P2',
    ],
  ] as [string, [string, string][], string][])('%s', (_name, taken, expected) => {
    const bookings = taken.map(([time, table]) => booking(time, 2, [table], 'confirmed', 90));
    expect(run({ time: '20:00', party: 3, bookings, config, options: { allSeatings: true } })).toMatchObject({ seating: expected });
  });

  it('changes no answer of GET /availability (the seats), and the plan order is kept when asked', () => {
    const bookings = [booking('18:30', 2, ['P2'], 'confirmed', 90)];
    expect(run({ time: '20:00', party: 3, bookings, config })).toMatchObject({ seating: 'P1', proposal: { seats: 4 } });
    expect(run({ time: '20:00', party: 3, bookings, config, options: { allSeatings: true } })).toMatchObject({
      seating: 'P2',
      proposal: { seats: 4 },
    });
    const planOrder = new VenueDay(config, day, bookings, now, { tableChoice: 'plan-order' }).evaluate('20:00', 3, { allSeatings: true });
    expect(planOrder.available && planOrder.seatings[0].id).toBe('P1');
  });
});

describe('which table among equals by packing: the venue demand curve breaks the ties (docs/reservations.md "Which table")', () => {
  // P1 seats 2–4 and Q1 3–4: same size, but only P1 takes a couple. Plan order: P1 first.
  const tables = [
    { id: 'P1', name: 'P1', areaId: 'A', areaPosition: 0, minSeats: 2, maxSeats: 4, isBlocked: false },
    { id: 'Q1', name: 'Q1', areaId: 'A', areaPosition: 0, minSeats: 3, maxSeats: 4, isBlocked: false },
  ];
  const config = baseConfig({ tables, combinations: [], pacingRules: [] });
  const curveOf = (rows: [number, string, number][]) =>
    learnDemandCurve(
      rows.map(([partySize, time, count]) => ({ partySize, time, count })),
      1,
    );
  const choose = (demand: DemandCurve | undefined, bookings: Booking[] = []) => {
    const e = new VenueDay(config, day, bookings, now, { demand }).evaluate('20:00', 3, { allSeatings: true });
    return e.available && e.seatings[0].id;
  };
  // A party of 3 at 20:00 (90 minutes, to 21:30).
  it.each<[string, [number, string, number][], string]>([
    ['no curve (a new venue): the plan order', [], 'P1'],
    ['couples expected over its times: the table they cannot use', [[2, '20:30', 2]], 'Q1'],
    ['couples expected after it has left: the plan order', [[2, '21:30', 2]], 'P1'],
    ['couples expected at lunch: the plan order', [[2, '12:30', 3]], 'P1'],
    ['couples expected at a time no shift opens: the plan order', [[2, '17:00', 3]], 'P1'],
    ['only parties both tables seat: the plan order', [[4, '20:00', 3]], 'P1'],
  ])('%s', (_name, rows, expected) => {
    expect(choose(rows.length ? curveOf(rows) : undefined)).toBe(expected);
  });

  it('counts only the parties still to come: couples already booked are not expected again', () => {
    const demand = curveOf([[2, '20:30', 1]]);
    expect(choose(demand)).toBe('Q1');
    // The expected couple is booked (on a table of another day's floor: only its size and time count).
    expect(choose(demand, [booking('20:30', 2, [])])).toBe('P1');
  });

  it('comes after packing: a table end to end with another party wins whatever the curve', () => {
    const demand = curveOf([[2, '20:30', 5]]);
    expect(choose(demand, [booking('18:30', 2, ['P1'], 'confirmed', 90)])).toBe('P1');
  });

  it('changes no answer of GET /availability (the seats)', () => {
    const d = new VenueDay(config, day, [], now, { demand: curveOf([[2, '20:30', 2]]) });
    const e = d.evaluate('20:00', 3);
    expect(e.available && d.proposalOf(e).seats).toBe(4);
  });
});

describe('occupancy', () => {
  it.each([
    ['a table is free from the end of the previous party ([start, end))', '20:15', 'confirmed', 'T1'],
    ['overlapping intervals take the table', '20:00', 'confirmed', 'T2'],
    ['released frees the table', '20:00', 'released', 'T1'],
    ['completed frees the table', '20:00', 'completed', 'T1'],
    ['no_show frees the table', '20:00', 'no_show', 'T1'],
    ['cancelled frees the table', '20:00', 'cancelled', 'T1'],
  ])('%s', (_name, time, status, expected) => {
    const bookings = [booking('19:00', 2, ['T1'], status as ReservationStatus, 75)];
    expect(run({ time, party: 2, bookings })).toMatchObject({ seating: expected });
  });

  it('a seated party past its endsAt keeps its table until released or completed', () => {
    const later = Date.parse('2026-07-02T12:00:00Z'); // 14:00 in Rome
    const seated = booking('12:00', 2, ['T1'], 'seated', 60); // ended at 13:00
    expect(run({ time: '14:00', party: 2, now: later, bookings: [seated], options: { ignoreBookingWindow: true } })).toMatchObject({
      seating: 'T2',
    });
    const confirmed = { ...seated, status: 'confirmed' as const };
    expect(run({ time: '14:00', party: 2, now: later, bookings: [confirmed], options: { ignoreBookingWindow: true } })).toMatchObject({
      seating: 'T1',
    });
  });

  it('a reservation being changed does not block itself', () => {
    const own = booking('20:00', 2, ['T1']);
    expect(run({ time: '20:30', party: 2, bookings: [own], options: { reservationId: own.id, preferredSeatingId: 'T1' } })).toMatchObject({
      seating: 'T1',
    });
  });

  it('a past-midnight reservation of the previous day occupies the table', () => {
    const occupancy = new Occupancy([booking('00:00', 2, ['T1'], 'confirmed', 120, '2026-07-01')], now);
    const start = local('2026-07-02', '01:00');
    expect(occupancy.isFree(['T1'], start, start + 3_600_000)).toBe(false);
    expect(occupancy.isFree(['T1'], start + 3_600_000, start + 7_200_000)).toBe(true);
  });
});

describe('pacing', () => {
  it.each([
    [
      'statuses cancelled and no_show do not count',
      [booking('12:00', 4, []), booking('12:05', 4, [], 'cancelled'), booking('12:10', 4, [], 'no_show')],
      '12:20',
      4,
      true,
    ],
    [
      'seated, released and completed count',
      [booking('12:00', 3, [], 'seated'), booking('12:05', 3, [], 'completed'), booking('12:10', 1, [], 'released')],
      '12:20',
      2,
      false,
    ],
    ['blocks are aligned on the shift start', [booking('12:25', 8, [])], '12:30', 2, true],
    ['the next block is another count', [booking('12:25', 8, [])], '12:30', 6, true],
    ['reservations without a table count', [booking('12:00', 6, [])], '12:29', 3, false],
  ])('%s', (_name, bookings, time, party, available) => {
    expect(run({ time, party, bookings }).available).toBe(available);
  });

  it('applies every enabled rule of the shift', () => {
    const config = baseConfig({
      pacingRules: [
        { id: 'p30', shiftId: 'lunch', isEnabled: true, maxCovers: 8, windowMinutes: 30 },
        { id: 'p60', shiftId: 'lunch', isEnabled: true, maxCovers: 10, windowMinutes: 60 },
      ],
    });
    const bookings = [booking('12:00', 4, []), booking('12:15', 2, []), booking('12:40', 4, [])];
    expect(run({ time: '12:45', party: 2, bookings, config })).toMatchObject({ reason: 'pacing_full' });
    expect(run({ time: '13:00', party: 2, bookings, config }).available).toBe(true);
  });

  it('counts past-midnight reservations of the same serviceDate only', () => {
    const config = baseConfig({ pacingRules: [{ id: 'd60', shiftId: 'dinner', isEnabled: true, maxCovers: 6, windowMinutes: 60 }] });
    expect(run({ time: '00:10', party: 4, bookings: [booking('00:05', 4, [])], config })).toMatchObject({ reason: 'pacing_full' });
    expect(run({ time: '00:10', party: 4, bookings: [booking('00:05', 4, [], 'confirmed', 90, '2026-07-03')], config }).available).toBe(
      true,
    );
  });

  it('ignores the reservation being changed', () => {
    const own = booking('12:00', 6, []);
    expect(run({ time: '12:10', party: 6, bookings: [own], options: { reservationId: own.id } }).available).toBe(true);
  });
});

describe('slot holds (docs/reservations.md "Slot holds")', () => {
  const hold = (expiresAt: number) => ({ ...booking('12:00', 6, ['T3'], 'created'), expiresAt });
  it.each([
    ['a live hold takes its table and counts for pacing', now + 1, { seating: 'T1+T2' }, { reason: 'pacing_full' }],
    ['a hold lapses at its expiresAt exactly: nothing taken, nothing counted', now, { seating: 'T3' }, { available: true }],
    ['a lapsed hold, however old, neither', now - 3_600_000, { seating: 'T3' }, { available: true }],
  ])('%s', (_name, expiresAt, table, pacing) => {
    const bookings = [hold(expiresAt)];
    expect(run({ time: '12:30', party: 5, bookings })).toMatchObject(table);
    expect(run({ time: '12:10', party: 5, bookings })).toMatchObject(pacing);
    expect(new Occupancy(bookings, now).isFree(['T3'], local(day, '12:00'), local(day, '12:30'))).toBe(!('reason' in pacing));
  });

  it('a hold being booked does not count against its own booking', () => {
    const own = hold(now + 60_000);
    expect(run({ time: '12:00', party: 6, bookings: [own], options: { reservationId: own.id, requestedSeatingId: 'T3' } })).toMatchObject({
      seating: 'T3',
    });
  });
});

describe('proposal', () => {
  it.each([
    [
      'dinner couple',
      '20:00',
      2,
      {
        time: '20:00',
        startsAt: '2026-07-02T18:00:00.000Z',
        endsAt: '2026-07-02T19:15:00.000Z',
        turnTimeMinutes: 75,
        seats: 2,
        overflowsShift: false,
      },
    ],
    ['ending exactly at the shift end does not overflow', '23:30', 3, { endsAt: '2026-07-02T23:00:00.000Z', overflowsShift: false }],
    [
      'ending after the shift end overflows',
      '23:30',
      5,
      { endsAt: '2026-07-02T23:30:00.000Z', turnTimeMinutes: 120, overflowsShift: true },
    ],
    ['past midnight belongs to the serviceDate', '00:15', 2, { time: '00:15', startsAt: '2026-07-02T22:15:00.000Z', overflowsShift: true }],
  ])('%s', (_name, time, party, expected) => {
    expect(run({ time, party })).toMatchObject({ available: true, proposal: expected });
  });
});

describe('DST', () => {
  const nightShift = (id: string) => ({
    id,
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    startTime: '00:00',
    lastSeatingTime: '03:30',
    endTime: '04:00',
    validFrom: null,
    validTo: null,
    isActive: true,
  });
  const at = (tz: string, date: string, time: string) => {
    const config = baseConfig({
      venue: { timezone: tz, slotIntervalMinutes: 30, bookingHorizonDays: 730, minNoticeMinutes: 0, tableOptimisation: false },
      shifts: [nightShift('night')],
      pacingRules: [],
    });
    const d = new VenueDay(config, date, [], Date.parse('2026-01-01T00:00:00Z'));
    const e = d.evaluate(time, 3);
    return e.available ? d.proposalOf(e) : e.reason;
  };
  it.each([
    ['Europe/Rome gap: 02:30 moves to 03:30', 'Europe/Rome', '2026-03-29', '02:30', '2026-03-29T01:30:00.000Z', '2026-03-29T03:00:00.000Z'],
    [
      'Europe/Rome overlap: 02:30 is the earlier one',
      'Europe/Rome',
      '2026-10-25',
      '02:30',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T02:00:00.000Z',
    ],
    ['America/New_York gap', 'America/New_York', '2027-03-14', '02:30', '2027-03-14T07:30:00.000Z', '2027-03-14T09:00:00.000Z'],
    ['America/New_York overlap', 'America/New_York', '2026-11-01', '01:30', '2026-11-01T05:30:00.000Z', '2026-11-01T07:00:00.000Z'],
  ])('%s', (_name, tz, date, time, startsAt, endsAt) => {
    expect(at(tz, date, time)).toMatchObject({ time, startsAt, endsAt, turnTimeMinutes: 90 });
  });

  it('keeps 90 real minutes of turn time across the change', () => {
    // 01:30 + 90 min on the night clocks go back is 02:00 local the second time, i.e. 01:00Z.
    expect(at('Europe/Rome', '2026-10-25', '01:30')).toMatchObject({
      startsAt: '2026-10-24T23:30:00.000Z',
      endsAt: '2026-10-25T01:00:00.000Z',
    });
  });
});

describe('explained slots (docs/reservations.md "Explained availability")', () => {
  it('lists every grid time of every shift of the day to its end, past midnight and closed shifts included, with the verdict of evaluate', () => {
    for (const [date, party] of [
      [day, 2],
      ['2026-08-20', 2],
      ['2026-08-15', 2],
      [day, 30],
    ] as const) {
      const d = new VenueDay(baseConfig(), date, [booking('19:00', 2, ['T1'])], now);
      const explained = d.explainSlots(party);
      const times = explained.map((s) => s.time);
      expect(times.slice(0, 12)).toEqual([
        '12:00',
        '12:15',
        '12:30',
        '12:45',
        '13:00',
        '13:15',
        '13:30',
        '13:45',
        '14:00',
        '14:15',
        '14:30',
        '14:45',
      ]);
      expect(times.slice(12, 14)).toEqual(['19:00', '19:15']);
      expect(times.slice(-4)).toEqual(['00:00', '00:15', '00:30', '00:45']);
      for (const slot of explained) {
        const e = d.evaluate(slot.time, party);
        expect(slot).toEqual(
          e.available
            ? { ...d.proposalOf(e), available: true, reason: 'available', turnTimeSource: 'configured' }
            : { time: slot.time, available: false, reason: e.reason },
        );
      }
    }
    const reasons = (date: string) => new Set(new VenueDay(baseConfig(), date, [], now).explainSlots(2).map((s) => s.reason));
    expect(reasons('2026-08-20')).toEqual(new Set(['closed', 'available', 'after_last_seating']));
    expect(reasons('2026-08-15')).toEqual(new Set(['closed']));
    expect(
      new VenueDay(baseConfig(), '2026-07-05', [], now)
        .explainSlots(2)
        .map((s) => s.time)
        .includes('19:00'),
    ).toBe(false);
  });
});

describe('slots and alternatives', () => {
  it('lists every available grid time of the open shifts', () => {
    const d = new VenueDay(baseConfig(), day, [], now);
    const times = d.slots(2).map((p) => p.time);
    expect(times.slice(0, 9)).toEqual(['12:00', '12:15', '12:30', '12:45', '13:00', '13:15', '13:30', '13:45', '14:00']);
    expect(times.slice(9, 11)).toEqual(['19:00', '19:15']);
    expect(times.at(-1)).toBe('00:15');
    expect(times).toHaveLength(9 + 22);
    expect(d.countSlots(2)).toBe(31);
  });

  it.each([
    ['Sunday, lunch only', '2026-07-05', 9],
    ['closed day', '2026-08-15', 0],
    ['lunch closed', '2026-08-20', 22],
    ['past day', '2026-06-30', 0],
  ])('%s', (_name, date, count) => {
    expect(new VenueDay(baseConfig(), date, [], now).countSlots(2)).toBe(count);
  });

  it('offers nearest first, earlier first on ties, at most 6, within ±120 minutes', () => {
    const config = baseConfig({ pacingRules: [{ id: 'd15', shiftId: 'dinner', isEnabled: true, maxCovers: 2, windowMinutes: 15 }] });
    const d = new VenueDay(config, day, [booking('20:00', 2, [])], now);
    const answer = d.check('20:00', 2);
    expect(answer).toMatchObject({ available: false, reason: 'pacing_full' });
    expect(answer.alternatives.map((p) => p.time)).toEqual(['19:45', '20:15', '19:30', '20:30', '19:15', '20:45']);
    expect(answer.alternatives[0]).toEqual({
      time: '19:45',
      startsAt: '2026-07-02T17:45:00.000Z',
      endsAt: '2026-07-02T19:00:00.000Z',
      turnTimeMinutes: 75,
      seats: 2,
      overflowsShift: false,
    });
  });

  it('offers only times within ±120 minutes of the same day', () => {
    const d = new VenueDay(baseConfig(), day, [], now);
    expect(d.check('16:00', 2).alternatives.map((p) => p.time)).toEqual(['14:00']);
    expect(d.check('00:45', 2).alternatives.map((p) => p.time)).toEqual(['00:15', '00:00', '23:45', '23:30', '23:15', '23:00']);
  });

  it('has no alternatives when available', () => {
    expect(new VenueDay(baseConfig(), day, [], now).check('20:00', 2)).toMatchObject({ available: true, reason: null, alternatives: [] });
  });
});

describe('table optimisation (docs/reservations.md "Table optimisation")', () => {
  const optimising = (on: boolean) =>
    baseConfig({ venue: { timezone: zone, slotIntervalMinutes: 15, bookingHorizonDays: 90, minNoticeMinutes: 0, tableOptimisation: on } });
  // A couple on each four-top and a party of 5 on the six-top at 20:00; the two-top T1 is free.
  const fragmented = (extra: Partial<Booking> = {}) => [
    { ...booking('20:00', 2, ['T2'], 'confirmed', 75), ...extra },
    { ...booking('20:00', 2, ['B1'], 'confirmed', 75), ...extra },
    booking('20:00', 5, ['T3'], 'confirmed', 120),
  ];
  const evaluate = (on: boolean, bookings: Booking[], options: EvaluateOptions = {}, at = now) =>
    new VenueDay(optimising(on), day, bookings, at).evaluate('20:00', 4, options);

  it('off: a party of 4 finds no table; on: the couple on T2 moves to T1 and the party gets T2', () => {
    const bookings = fragmented();
    expect(evaluate(false, bookings)).toMatchObject({ available: false, reason: 'no_table' });
    const on = evaluate(true, bookings);
    expect(
      on.available && {
        seating: on.seatings.map((s) => s.id),
        moves: on.moves.map((m) => [m.reservationId, m.fromTableIds, m.toSeating.id]),
      },
    ).toEqual({
      seating: ['T2'],
      moves: [[bookings[0].id, ['T2'], 'T1']],
    });
  });

  it.each<[string, Partial<Booking>, EvaluateOptions, number?]>([
    ['locked tables', { tableLocked: true }, {}],
    ['parties arriving within 30 minutes', {}, {}, local(day, '19:40')],
    ['a change of an existing reservation', {}, { reservationId: 'someone' }],
    ['an import (keepOthersInPlace)', {}, { keepOthersInPlace: true }],
    ['an explicit table', {}, { requestedSeatingId: 'T2' }],
  ])('moves nobody for %s', (_name, extra, options, at) => {
    expect(evaluate(true, fragmented(extra), options, at).available).toBe(false);
  });

  it('availability, slots and alternatives answer what a booking would get', () => {
    const d = new VenueDay(optimising(true), day, fragmented(), now);
    expect(d.check('20:00', 4)).toMatchObject({ available: true, proposal: { time: '20:00', seats: 4 } });
    expect(d.slots(4).map((p) => p.time)).toContain('20:00');
    expect(new VenueDay(optimising(false), day, fragmented(), now).slots(4).map((p) => p.time)).not.toContain('20:00');
  });
});
