import { findInCauses } from './error-causes.js';

/**
 * The name of the unique index a PostgreSQL error violated, or null for any other error. The
 * driver's error may arrive wrapped (drizzle puts it in `cause`), so the cause chain is searched.
 */
export function violatedUniqueIndex(err: unknown): string | null {
  return (
    findInCauses(err, ({ code, constraint_name: name }) => (code === '23505' ? (typeof name === 'string' ? name : '') : undefined)) ?? null
  );
}
