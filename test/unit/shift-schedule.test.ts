import { describe, expect, it } from 'vitest';
import {
  formatMinutes,
  gridTimes,
  isoDayOfWeek,
  minutesOf,
  overlappingShifts,
  resolveServiceTime,
  shiftWindow,
  shiftsOn,
  type ClosureSchedule,
  type ShiftSchedule,
} from '../../src/lib/shift-schedule.js';

const everyDay = [1, 2, 3, 4, 5, 6, 7];

function shift(id: string, startTime: string, lastSeatingTime: string, endTime: string, extra: Partial<ShiftSchedule> = {}): ShiftSchedule {
  return { id, daysOfWeek: everyDay, startTime, lastSeatingTime, endTime, validFrom: null, validTo: null, isActive: true, ...extra };
}

const lunch = shift('lunch', '12:00', '14:00', '15:00');
const dinner = shift('dinner', '19:00', '22:00', '23:30');
const lateDinner = shift('late', '19:00', '00:30', '01:00');

describe('minutesOf / formatMinutes', () => {
  it.each([
    ['00:00', 0],
    ['00:30', 30],
    ['12:05', 725],
    ['23:59', 1439],
  ])('%s is minute %i', (hhmm, minutes) => {
    expect(minutesOf(hhmm)).toBe(minutes);
    expect(formatMinutes(minutes)).toBe(hhmm);
  });

  it('wraps minutes past midnight to the clock time', () => {
    expect(formatMinutes(1440 + 30)).toBe('00:30');
  });

  it.each(['7:00', '07:0', '', 'ab:cd'])('refuses %j', (bad) => {
    expect(() => minutesOf(bad)).toThrow(RangeError);
  });
});

describe('shiftWindow', () => {
  it.each([
    ['same-day shift', lunch, { start: 720, lastSeating: 840, end: 900 }],
    ['end past midnight', shift('x', '19:00', '22:00', '01:00'), { start: 1140, lastSeating: 1320, end: 1500 }],
    ['last seating and end past midnight', lateDinner, { start: 1140, lastSeating: 1470, end: 1500 }],
    ['end exactly at midnight', shift('x', '18:00', '22:00', '00:00'), { start: 1080, lastSeating: 1320, end: 1440 }],
    ['last seating at the start', shift('x', '18:00', '18:00', '20:00'), { start: 1080, lastSeating: 1080, end: 1200 }],
    ['end equal to start is a full day', shift('x', '06:00', '06:00', '06:00'), { start: 360, lastSeating: 360, end: 1800 }],
  ])('%s', (_name, s, expected) => {
    expect(shiftWindow(s)).toEqual(expected);
  });
});

describe('isoDayOfWeek', () => {
  it.each([
    ['2026-12-07', 1],
    ['2026-12-05', 6],
    ['2026-12-06', 7],
    ['2024-02-29', 4],
  ])('%s is day %i', (date, day) => {
    expect(isoDayOfWeek(date)).toBe(day);
  });
});

describe('shiftsOn', () => {
  const weekdays = shift('weekdays', '12:00', '14:00', '15:00', { daysOfWeek: [1, 2, 3, 4, 5] });
  const inactive = shift('inactive', '12:00', '14:00', '15:00', { isActive: false });
  const december = shift('december', '19:00', '22:00', '23:00', { validFrom: '2026-12-01', validTo: '2026-12-31' });
  const fromNewYear = shift('new-year', '19:00', '22:00', '23:00', { validFrom: '2027-01-01' });
  const all = [weekdays, inactive, december, fromNewYear];

  it.each([
    ['a Monday of December', '2026-12-07', ['weekdays', 'december']],
    ['a Saturday of December', '2026-12-05', ['december']],
    ['the last valid day', '2026-12-31', ['weekdays', 'december']],
    ['the first day of an open-ended range', '2027-01-01', ['weekdays', 'new-year']],
    ['before every range', '2026-11-30', ['weekdays']],
  ])('%s', (_name, date, ids) => {
    expect(shiftsOn(all, date).map((s) => s.id)).toEqual(ids);
  });
});

describe('overlappingShifts', () => {
  it.each([
    ['lunch and dinner', lunch, dinner, false],
    ['the same window', dinner, shift('b', '20:00', '21:00', '22:00'), true],
    ['back to back', lunch, shift('b', '15:00', '16:00', '18:00'), false],
    ['one minute into the next', lunch, shift('b', '14:59', '16:00', '18:00'), true],
    [
      'different days',
      shift('a', '12:00', '14:00', '15:00', { daysOfWeek: [1, 2] }),
      shift('b', '12:00', '14:00', '15:00', { daysOfWeek: [3] }),
      false,
    ],
    [
      'one shared day',
      shift('a', '12:00', '14:00', '15:00', { daysOfWeek: [1, 2] }),
      shift('b', '13:00', '14:00', '15:00', { daysOfWeek: [2, 3] }),
      true,
    ],
    [
      'disjoint validity ranges',
      shift('a', '12:00', '14:00', '15:00', { validTo: '2026-12-31' }),
      shift('b', '12:00', '14:00', '15:00', { validFrom: '2027-01-01' }),
      false,
    ],
    [
      'touching validity ranges',
      shift('a', '12:00', '14:00', '15:00', { validTo: '2027-01-01' }),
      shift('b', '12:00', '14:00', '15:00', { validFrom: '2027-01-01' }),
      true,
    ],
    [
      'open-ended ranges',
      shift('a', '12:00', '14:00', '15:00', { validFrom: '2027-01-01' }),
      shift('b', '12:00', '14:00', '15:00', { validTo: '2027-06-01' }),
      true,
    ],
    ['past-midnight tail and an early shift of the same day', lateDinner, shift('b', '00:00', '00:30', '00:45'), true],
    ['past-midnight tail ending where an early shift starts', lateDinner, shift('b', '01:00', '02:00', '03:00'), false],
    ['past-midnight shift and a later evening shift', lateDinner, shift('b', '23:00', '23:30', '23:45'), true],
  ])('%s → %s', (_name, a, b, expected) => {
    expect(overlappingShifts(a, b)).toBe(expected);
    expect(overlappingShifts(b, a)).toBe(expected);
  });
});

describe('resolveServiceTime', () => {
  const saturday = '2026-12-05';
  const shifts = [lunch, dinner];
  const none: ClosureSchedule[] = [];

  it.each([
    ['at the shift start', '12:00', 'open', 'lunch', 720],
    ['at the last seating', '14:00', 'open', 'lunch', 840],
    ['after the last seating', '14:15', 'after_last_seating', 'lunch', 855],
    ['at the shift end', '15:00', 'after_last_seating', 'lunch', 900],
    ['before the first shift', '11:45', 'no_shift', undefined, 705],
    ['between shifts', '16:00', 'no_shift', undefined, 960],
    ['dinner', '21:30', 'open', 'dinner', 1290],
    ['after every shift', '23:45', 'no_shift', undefined, 1425],
    ['just after midnight without a past-midnight shift', '00:30', 'no_shift', undefined, 30],
  ])('%s (%s) → %s', (_name, time, outcome, shiftId, minute) => {
    const result = resolveServiceTime(shifts, none, saturday, time);
    expect(result.outcome).toBe(outcome);
    expect(result.shift?.id).toBe(shiftId);
    expect(result.minuteOfService).toBe(minute);
  });

  it.each([
    ['evening part', '23:00', 'open', 1380],
    ['after midnight, before the last seating', '00:15', 'open', 1455],
    ['at the last seating after midnight', '00:30', 'open', 1470],
    ['after the last seating after midnight', '00:45', 'after_last_seating', 1485],
    ['at the end after midnight', '01:00', 'after_last_seating', 1500],
    ['after the end', '01:15', 'no_shift', 75],
  ])('past-midnight shift, same serviceDate: %s (%s) → %s', (_name, time, outcome, minute) => {
    const result = resolveServiceTime([lateDinner], none, saturday, time);
    expect(result.outcome).toBe(outcome);
    expect(result.minuteOfService).toBe(minute);
  });

  it('a past-midnight shift of Friday only counts when asked with Friday', () => {
    const fridayOnly = shift('fri', '19:00', '00:30', '01:00', { daysOfWeek: [5] });
    expect(resolveServiceTime([fridayOnly], none, '2026-12-04', '00:30')).toMatchObject({ outcome: 'open', minuteOfService: 1470 });
    expect(resolveServiceTime([fridayOnly], none, '2026-12-05', '00:30')).toMatchObject({ outcome: 'no_shift', minuteOfService: 30 });
  });

  it('an early shift takes its own clock time before a past-midnight tail is considered', () => {
    const breakfast = shift('breakfast', '07:00', '10:00', '11:00');
    expect(resolveServiceTime([lateDinner, breakfast], none, saturday, '07:30')).toMatchObject({ outcome: 'open', minuteOfService: 450 });
  });

  it('back-to-back shifts: the boundary belongs to the shift that still seats', () => {
    const afternoon = shift('afternoon', '15:00', '17:00', '18:00');
    const result = resolveServiceTime([lunch, afternoon], none, saturday, '15:00');
    expect(result).toMatchObject({ outcome: 'open', minuteOfService: 900 });
    expect(result.shift?.id).toBe('afternoon');
  });

  it.each<[string, ClosureSchedule[], string, string, string | undefined]>([
    ['whole day closed', [{ from: saturday, to: saturday, shiftIds: [] }], '12:30', 'closed', undefined],
    ['whole day closed wins over no_shift', [{ from: saturday, to: saturday, shiftIds: [] }], '17:00', 'closed', undefined],
    ['a range that covers the day', [{ from: '2026-12-01', to: '2026-12-10', shiftIds: [] }], '12:30', 'closed', undefined],
    ['a range that ends the day before', [{ from: '2026-12-01', to: '2026-12-04', shiftIds: [] }], '12:30', 'open', 'lunch'],
    ['the lunch closed, asked at lunch', [{ from: saturday, to: saturday, shiftIds: ['lunch'] }], '12:30', 'closed', 'lunch'],
    ['the lunch closed, asked after its last seating', [{ from: saturday, to: saturday, shiftIds: ['lunch'] }], '14:30', 'closed', 'lunch'],
    ['the lunch closed, asked at dinner', [{ from: saturday, to: saturday, shiftIds: ['lunch'] }], '20:00', 'open', 'dinner'],
    ['the lunch closed, asked between shifts', [{ from: saturday, to: saturday, shiftIds: ['lunch'] }], '16:00', 'no_shift', undefined],
  ])('closure: %s', (_name, closures, time, outcome, shiftId) => {
    const result = resolveServiceTime(shifts, closures, saturday, time);
    expect(result.outcome).toBe(outcome);
    expect(result.shift?.id).toBe(shiftId);
  });

  it('a closure of the past-midnight shift closes its after-midnight part', () => {
    const closures = [{ from: saturday, to: saturday, shiftIds: ['late'] }];
    expect(resolveServiceTime([lateDinner], closures, saturday, '00:15')).toMatchObject({ outcome: 'closed', minuteOfService: 1455 });
    expect(resolveServiceTime([lateDinner], closures, '2026-12-06', '00:15')).toMatchObject({ outcome: 'open' });
  });

  it('ignores inactive shifts and shifts of other days', () => {
    const weekdayLunch = shift('weekday', '12:00', '14:00', '15:00', { daysOfWeek: [1, 2, 3, 4, 5] });
    const inactive = shift('inactive', '19:00', '22:00', '23:00', { isActive: false });
    expect(resolveServiceTime([weekdayLunch, inactive], none, saturday, '12:30').outcome).toBe('no_shift');
    expect(resolveServiceTime([weekdayLunch, inactive], none, saturday, '20:00').outcome).toBe('no_shift');
  });
});

describe('gridTimes', () => {
  it.each([
    ['lunch every 30 minutes', lunch, 30, ['12:00', '12:30', '13:00', '13:30', '14:00']],
    ['a step that misses the last seating', shift('x', '12:00', '12:40', '14:00'), 15, ['12:00', '12:15', '12:30']],
    ['across midnight', lateDinner, 90, ['19:00', '20:30', '22:00', '23:30']],
    ['last seating at the start', shift('x', '18:00', '18:00', '20:00'), 15, ['18:00']],
  ])('%s', (_name, s, interval, times) => {
    expect(gridTimes(s, interval).map((g) => g.time)).toEqual(times);
  });

  it('gives minutes after midnight as 1440 + m', () => {
    expect(gridTimes(shift('x', '23:30', '00:30', '02:00'), 30)).toEqual([
      { time: '23:30', minuteOfService: 1410 },
      { time: '00:00', minuteOfService: 1440 },
      { time: '00:30', minuteOfService: 1470 },
    ]);
  });

  it.each([0, -15, 7.5])('refuses the interval %d', (interval) => {
    expect(() => gridTimes(lunch, interval)).toThrow(RangeError);
  });
});
