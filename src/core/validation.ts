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
 * Where the input holds U+0000 (in a string or a key): PostgreSQL text and jsonb cannot store it, so
 * it is refused up front. Iterative, so that a deeply nested body cannot overflow the stack.
 */
export function nulCharacterFields(input: unknown): string[] {
  const fields = new Set<string>();
  const pending: [unknown, string][] = [[input, '']];
  while (pending.length) {
    const [value, path] = pending.pop()!;
    if (typeof value === 'string') {
      if (value.includes('\u0000')) fields.add(path);
    } else if (value && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = path ? `${path}.${key}` : key;
        if (key.includes('\u0000')) fields.add(childPath);
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
  const nul = nulCharacterFields(input);
  if (nul.length) throw invalidFields(nul.map((f) => f || where), 'Text may not contain the NUL character (U+0000).');
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
// PostgreSQL has no year 0000 either: such a date is a 400 wherever a date is taken, not a failed query.
export const isoDate = z.iso.date().refine((d) => !d.startsWith('0000-'), 'must be a date from 0001-01-01 to 9999-12-31');
// Only instants of the years 0001 to 9999 (UTC) can be written YYYY-MM-DDTHH:mm:ss.sssZ and handed to
// PostgreSQL, which has no year 0: others are a 400, not a failed query.
export const instantParam = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s))
  .refine((d) => d.getUTCFullYear() >= 1 && d.getUTCFullYear() <= 9999, 'must be an instant of the years 0001 to 9999 (UTC)');
export const uuidParam = z.uuid();
