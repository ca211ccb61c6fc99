import { describe, expect, it } from 'vitest';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { normalisePhone, parsePhone, phoneDigits } from '../../src/lib/phone.js';

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

describe('phoneDigits and parsePhone', () => {
  it.each([
    ['+39 06-1234', '39061234'],
    ['(06) 12.34', '061234'],
    ['abc', ''],
  ])('phoneDigits(%j) is %j', (raw, digits) => {
    expect(phoneDigits(raw)).toBe(digits);
  });

  it.each([
    ['+33612345678', 'FR', '+33612345678', '0612345678'],
    ['+390612345678', 'IT', '+390612345678', '0612345678'],
    ['+12025550143', 'US', '+12025550143', '2025550143'],
    ['06 12 34 56 78', 'FR', '+33612345678', '0612345678'],
    ['347 123 4567', 'IT', '+393471234567', '3471234567'],
  ])('parsePhone(%s, %s) is %s with national digits %s', (raw, country, e164, nationalDigits) => {
    expect(parsePhone(raw, country)).toEqual({ e164, nationalDigits });
  });

  // The national digits come from the parse of what was written, with the venue's country; they
  // must be those of the number itself, as a reading of its E.164 form gives them (shared calling
  // codes included: +1 US/CA, +39 IT/VA, +44 GB/JE, +7 RU/KZ).
  it.each([
    ['(202) 555-0143', 'US'],
    ['(416) 555-0199', 'CA'],
    ['(416) 555-0199', 'US'],
    ['06 6988 1234', 'IT'],
    ['06 6988 1234', 'VA'],
    ['01534 123456', 'GB'],
    ['07797 712345', 'JE'],
    ['8 701 123 4567', 'KZ'],
    ['8 912 345 67 89', 'RU'],
    ['030 123456', 'DE'],
    ['+49 30 123456', 'IT'],
    ['0033 6 12 34 56 78', 'IT'],
    ['020 7946 0018', 'GB'],
    ['03-1234-5678', 'JP'],
  ])('the national digits of %s read in %s are those of its E.164 form', (raw, country) => {
    const phone = parsePhone(raw, country);
    expect(phone).not.toBeNull();
    expect(phone!.e164).toBe(normalisePhone(raw, country));
    expect(phone!.nationalDigits).toBe(phoneDigits(parsePhoneNumberFromString(phone!.e164)!.formatNational()));
  });
});
