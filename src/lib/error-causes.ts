/**
 * The first error in a chain of causes (the driver's error arrives wrapped: drizzle puts it in
 * `cause`) for which `pick` returns a value, or undefined. Five levels at most.
 */
export function findInCauses<T>(err: unknown, pick: (e: { code?: unknown; constraint_name?: unknown }) => T | undefined): T | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const found = pick(e as { code?: unknown; constraint_name?: unknown });
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Whether PostgreSQL answered with this SQLSTATE anywhere in the chain of causes. */
export function hasSqlState(err: unknown, sqlState: string): boolean {
  return findInCauses(err, ({ code }) => (code === sqlState ? true : undefined)) ?? false;
}
