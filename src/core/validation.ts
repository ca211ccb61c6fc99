import { z } from 'zod';
import { ApiError } from './errors.js';

// Plainer words than zod's defaults for the two commonest mistakes: a missing field, and a number
// that is not one (query values are coerced, so a missing or non-numeric one arrives as NaN).
z.config({
  customError: (issue) => {
    if (issue.input === undefined) return 'is required';
    if (issue.code === 'invalid_type' && issue.expected === 'number' && Number.isNaN(issue.input)) return 'must be a number';
    return undefined;
  },
});

/** Names the offending fields of a zod failure, as `details.fields` wants them. */
export function fieldsOf(error: z.ZodError, prefix?: string): string[] {
  const fields = new Set<string>();
  for (const issue of error.issues) {
    const base = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) fields.add(base ? `${base}.${key}` : key);
    } else {
      fields.add(base || prefix || 'body');
    }
  }
  return [...fields];
}

function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, 5)
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      return path ? `${path}: ${issue.message}` : issue.message;
    })
    .join('; ');
}

/**
 * Text PostgreSQL cannot store as given: U+0000 (text and jsonb cannot hold it), and a lone UTF-16
 * surrogate, which JSON can escape (`"\ud800"`) but UTF-8 cannot encode (the driver would store it as
 * U+FFFD in text, and jsonb refuses it). Matched on UTF-16 code units, hence no `u` flag.
 */
// eslint-disable-next-line no-control-regex -- U+0000 is exactly what this pattern must find.
const invalidText = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function isInvalidText(value: string): boolean {
  return invalidText.test(value);
}

/**
 * Where the input holds invalid text (in a string or a key), refused up front wherever input is
 * parsed. Iterative, so that a deeply nested body cannot overflow the stack.
 */
export function invalidTextFields(input: unknown): string[] {
  const fields = new Set<string>();
  const pending: [unknown, string][] = [[input, '']];
  while (pending.length) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'string') {
      if (isInvalidText(value)) fields.add(path);
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        if (isInvalidText(key)) fields.add(childPath);
        else pending.push([child, childPath]);
      }
    }
  }
  return [...fields];
}

/** The 400 naming the fields; a wrong phone also sets `details.field: "phone"` (docs/api.md "Requests"). */
function invalidFields(fields: string[], message: string): ApiError {
  const phoneIssue = fields.some((f) => f === 'phone' || f.endsWith('.phone'));
  return ApiError.invalid(fields, message, phoneIssue ? { field: 'phone' } : {});
}

/** Parses input with a schema or throws the contract's 400 naming every wrong field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, input: unknown, where: 'body' | 'query'): z.output<S> {
  const badText = invalidTextFields(input);
  if (badText.length)
    throw invalidFields(
      badText.map((f) => f || where),
      'Text may not contain the NUL character (U+0000) or a lone UTF-16 surrogate.',
    );
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  throw invalidFields(fieldsOf(result.error, where), `Invalid ${where}: ${describe(result.error)}`);
}

// Shared field schemas: one definition of each wire format.
/** Optional free text: trimmed, and an empty string is stored as null. */
export const optionalText = (max: number) =>
  z
    .string()
    .trim()
    .max(max)
    .transform((s) => s || null)
    .nullable();

export const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:mm');
/**
 * The service dates the API takes (docs/api.md "Dates and instants"). A service date's reservations
 * run from its local midnight to two days later (past-midnight service) plus their duration, in any
 * zone (UTC-12 to UTC+14, older local mean times up to about ±16 h), and the queries of a date read a
 * day either side. From 0001-01-02 to 9999-12-28 all of that stays in the instants below (PostgreSQL
 * has no year 0, and a year past 9999 cannot be written YYYY-MM-DDTHH:mm:ss.sssZ); outside it is a 400.
 */
export const serviceDateRange = { min: '0001-01-02', max: '9999-12-28' } as const;
export const isoDate = z.iso
  .date()
  .refine(
    (d) => d >= serviceDateRange.min && d <= serviceDateRange.max,
    `must be a date from ${serviceDateRange.min} to ${serviceDateRange.max}`,
  );

/** The instants the API takes: those of the years 0001 to 9999 (UTC), the ones it can write back. */
export const instantRange = { min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z') } as const;

export function isAnswerableInstant(date: Date): boolean {
  return date >= instantRange.min && date <= instantRange.max;
}

/** An instant with its offset (any offset; the value is what counts) → Date, within instantRange. */
export const instantParam = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine(isAnswerableInstant, 'must be an instant from 0001-01-01T00:00:00.000Z to 9999-12-31T23:59:59.999Z');
export const uuidParam = z.uuid();
