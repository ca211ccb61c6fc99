import { getCountries } from 'libphonenumber-js';

const countries = new Set<string>(getCountries());

export function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone.length > 0;
  } catch {
    return false;
  }
}

export function isKnownCountry(code: string): boolean {
  return countries.has(code);
}
