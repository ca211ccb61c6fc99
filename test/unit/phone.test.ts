import { describe, expect, it } from 'vitest';
import { nationalPhoneDigits, normalisePhone, phoneDigits } from '../../src/lib/phone.js';

describe('normalisePhone', () => {
  it.each([
    ['+39 06 1234 5678', 'IT'],
    ['0039 06 12345678', 'IT'],
    ['06 1234 5678', 'IT'],
    ['(06) 12345678', 'IT'],
    ['06-1234-5678', 'IT'],
    ['+39.06.1234.5678', 'IT'],
    ['  +390612345678  ', 'IT'],
    // An international form wins over the venue's country.
    ['+39 06 1234 5678', 'FR'],
  ])('reads %s (venue country %s) as the same E.164 number', (raw, country) => {
    expect(normalisePhone(raw, country)).toBe('+390612345678');
  });

  it.each([
    ['06 12 34 56 78', 'FR', '+33612345678'],
    ['0033 6 12 34 56 78', 'FR', '+33612345678'],
    ['(202) 555-0143', 'US', '+12025550143'],
    ['347 123 4567', 'it', '+393471234567'],
  ])('reads %s in %s as %s', (raw, country, e164) => {
    expect(normalisePhone(raw, country)).toBe(e164);
  });

  it.each([
    ['12345', 'IT'],
    ['', 'IT'],
    ['abc', 'IT'],
    ['06 1234 5678 call after 6', 'IT'],
    ['+999 12345678', 'IT'],
    ['+39 06 1234 5678 9999 9999', 'IT'],
    ['0000000000', 'IT'],
  ])('refuses %j', (raw, country) => {
    expect(normalisePhone(raw, country)).toBeNull();
  });
});

describe('phoneDigits and nationalPhoneDigits', () => {
  it.each([
    ['+39 06-1234', '39061234'],
    ['(06) 12.34', '061234'],
    ['abc', ''],
  ])('phoneDigits(%j) is %j', (raw, digits) => {
    expect(phoneDigits(raw)).toBe(digits);
  });

  it.each([
    ['+33612345678', '0612345678'],
    ['+390612345678', '0612345678'],
    ['+12025550143', '2025550143'],
  ])('nationalPhoneDigits(%s) is %s', (e164, digits) => {
    expect(nationalPhoneDigits(e164)).toBe(digits);
  });
});
