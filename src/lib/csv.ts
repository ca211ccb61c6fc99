/**
 * A text cell a spreadsheet would run as a formula (OWASP "CSV Injection"): it starts with = + - @,
 * a tab or a CR, and is not just a signed number (an E.164 phone `+39…` carries no formula).
 */
const formulaStart = /^[=+\-@\t\r]/;
const signedNumber = /^[+-]\d+(\.\d+)?$/;

/**
 * CSV of RFC 4180: a field is quoted when it holds a comma, a double quote, CR or LF, or starts or
 * ends with a space (so that spreadsheets keep it), and a double quote inside is doubled. null and
 * undefined are empty fields; lines end with CRLF. A text that a spreadsheet would take for a formula
 * is neutralised as OWASP recommends (docs/security.md "Exports"): prefixed with a single quote and
 * quoted, so that it shows as the text written. Numbers are written as they are (-3, +39347…).
 */
export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'string') return String(value);
  if (formulaStart.test(value) && !signedNumber.test(value)) return `"'${value.replace(/"/g, '""')}"`;
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function csvLine(values: readonly (string | number | boolean | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
