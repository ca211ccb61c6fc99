/**
 * CSV of RFC 4180: a field is quoted when it holds a comma, a double quote, CR or LF, or starts or
 * ends with a space (so that spreadsheets keep it), and a double quote inside is doubled. null and
 * undefined are empty fields; lines end with CRLF.
 */
export function csvField(value: string | number | boolean | null | undefined): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]|^\s|\s$/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function csvLine(values: readonly (string | number | boolean | null | undefined)[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
