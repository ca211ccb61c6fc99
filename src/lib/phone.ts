import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';

// Digits, spaces and the usual separators only: free text around a number ("call after 6")
// is refused rather than silently cut away.
const phoneCharacters = /^[0-9+()./\-\s]{3,40}$/;

/**
 * A phone number in E.164 (`+390612345678`), or null when it is not a valid number. National
 * forms are read with the venue's country; international ones (`+39…`, `0039…`) with their own.
 * The `max` metadata is used so that only numbers that can really exist are accepted.
 */
export function normalisePhone(raw: string, countryCode: string): string | null {
  const trimmed = raw.trim();
  if (!phoneCharacters.test(trimmed)) return null;
  const parsed = parsePhoneNumberFromString(trimmed, { defaultCountry: countryCode.toUpperCase() as CountryCode });
  return parsed && parsed.isValid() ? parsed.number : null;
}

/** The digits of a phone number in any form: `+39 06-1234` → `39061234`. */
export function phoneDigits(raw: string): string {
  return raw.replace(/\D/g, '');
}

/** The digits of the national form of an E.164 number (`+33612345678` → `0612345678`), for search. */
export function nationalPhoneDigits(e164: string): string {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed ? phoneDigits(parsed.formatNational()) : phoneDigits(e164);
}
