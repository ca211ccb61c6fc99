import { describe, expect, it } from 'vitest';
import { addDays, daysBetween, instantToLocal, localToInstant, serviceDayClock } from '../../src/lib/local-time.js';

const at = (zone: string, date: string, hhmm: string) => {
  const [h, m] = hhmm.split(':').map(Number);
  return new Date(localToInstant(zone, date, h * 60 + m)).toISOString();
};

describe('localToInstant', () => {
  it.each([
    // Ordinary times, winter and summer.
    ['Europe/Rome', '2026-01-15', '20:00', '2026-01-15T19:00:00.000Z'],
    ['Europe/Rome', '2026-07-01', '20:00', '2026-07-01T18:00:00.000Z'],
    ['America/New_York', '2026-01-15', '19:30', '2026-01-16T00:30:00.000Z'],
    // DST gap: a nonexistent local time moves forward by the gap (02:30 → 03:30).
    ['Europe/Rome', '2026-03-29', '02:30', '2026-03-29T01:30:00.000Z'],
    ['Europe/Rome', '2026-03-29', '02:00', '2026-03-29T01:00:00.000Z'],
    ['Europe/Rome', '2026-03-29', '03:00', '2026-03-29T01:00:00.000Z'],
    ['America/New_York', '2026-03-08', '02:30', '2026-03-08T07:30:00.000Z'],
    ['America/New_York', '2026-03-08', '01:59', '2026-03-08T06:59:00.000Z'],
    // DST overlap: an ambiguous local time takes the earlier instant (summer time still).
    ['Europe/Rome', '2026-10-25', '02:30', '2026-10-25T00:30:00.000Z'],
    ['Europe/Rome', '2026-10-25', '03:00', '2026-10-25T02:00:00.000Z'],
    ['America/New_York', '2026-11-01', '01:30', '2026-11-01T05:30:00.000Z'],
    ['America/New_York', '2026-11-01', '02:00', '2026-11-01T07:00:00.000Z'],
  ])('%s %s %s → %s', (zone, date, time, expected) => {
    expect(at(zone, date, time)).toBe(expected);
  });

  it('reads minutes past 1440 as the next day (past-midnight part of a shift)', () => {
    expect(new Date(localToInstant('Europe/Rome', '2026-07-01', 1470)).toISOString()).toBe('2026-07-01T22:30:00.000Z');
    // The night of the spring change: 02:30 on the next day does not exist and moves to 03:30.
    expect(new Date(localToInstant('Europe/Rome', '2026-03-28', 1440 + 150)).toISOString()).toBe('2026-03-29T01:30:00.000Z');
  });
});

describe('serviceDayClock', () => {
  it.each([
    ['Europe/Rome', '2026-03-28'],
    ['Europe/Rome', '2026-03-29'],
    ['Europe/Rome', '2026-10-24'],
    ['Europe/Rome', '2026-10-25'],
    ['Europe/Rome', '2026-06-10'],
    ['America/New_York', '2026-03-07'],
    ['America/New_York', '2026-03-08'],
    ['America/New_York', '2026-10-31'],
    ['America/New_York', '2026-11-01'],
    ['Asia/Kolkata', '2026-05-05'],
  ])('agrees with localToInstant on every quarter hour of %s %s', (zone, date) => {
    const clock = serviceDayClock(zone, date);
    for (let m = 0; m < 2880; m += 15) expect(clock(m)).toBe(localToInstant(zone, date, m));
  });
});

describe('instantToLocal and date arithmetic', () => {
  it.each([
    ['Europe/Rome', '2026-07-01T22:30:00.000Z', '2026-07-02', 30],
    ['Europe/Rome', '2026-01-01T10:15:00.000Z', '2026-01-01', 675],
    ['America/New_York', '2026-11-01T05:30:00.000Z', '2026-11-01', 90],
    ['America/New_York', '2026-11-01T06:30:00.000Z', '2026-11-01', 90],
    ['America/New_York', '2026-01-01T03:00:00.000Z', '2025-12-31', 1320],
  ])('%s at %s is %s minute %i', (zone, iso, date, minutes) => {
    expect(instantToLocal(zone, Date.parse(iso))).toEqual({ date, minutes });
  });

  it('reads the offset of each second, one after another across a DST change (the offset is kept per second)', () => {
    // Europe/Rome moves from +01:00 to +02:00 at 2026-03-29T01:00:00Z; the same zone is read in turn
    // on either side of it, within one second and in the next.
    const sequence: Array<[string, string, number]> = [
      ['2026-03-29T00:59:59.000Z', '2026-03-29', 119],
      ['2026-03-29T00:59:59.999Z', '2026-03-29', 119],
      ['2026-03-29T01:00:00.000Z', '2026-03-29', 180],
      ['2026-03-29T00:59:59.500Z', '2026-03-29', 119],
      ['2026-03-29T01:00:00.999Z', '2026-03-29', 180],
      ['2026-10-25T00:59:59.999Z', '2026-10-25', 179],
      ['2026-10-25T01:00:00.000Z', '2026-10-25', 120],
    ];
    for (const [iso, date, minutes] of sequence)
      expect([iso, instantToLocal('Europe/Rome', Date.parse(iso))]).toEqual([iso, { date, minutes }]);
  });

  it('adds days and counts them across month, year and DST boundaries', () => {
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -1)).toBe('2026-02-28');
    expect(addDays('2026-03-28', 2)).toBe('2026-03-30');
    expect(daysBetween('2026-03-28', '2026-03-30')).toBe(2);
    expect(daysBetween('2026-01-10', '2026-01-01')).toBe(-9);
  });
});
