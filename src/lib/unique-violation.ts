/**
 * The name of the unique index a PostgreSQL error violated, or null for any other error. The
 * driver's error may arrive wrapped (drizzle puts it in `cause`), so the cause chain is searched.
 */
export function violatedUniqueIndex(err: unknown): string | null {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const { code, constraint_name: name } = e as { code?: unknown; constraint_name?: unknown };
    if (code === '23505') return typeof name === 'string' ? name : '';
  }
  return null;
}
