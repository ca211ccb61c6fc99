import { sql } from 'drizzle-orm';
import { timestamp, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { newId } from '../../lib/uuid-v7.js';

/** Instants are kept to the millisecond: updatedAt doubles as the If-Match version. */
export const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

/**
 * Ids made by the application are time-ordered (src/lib/uuid-v7.ts: inserts stay at the right edge of
 * the primary key's B-tree); the column keeps PostgreSQL's random default for rows written by SQL alone.
 */
export const idColumn = () =>
  uuid('id')
    .primaryKey()
    .defaultRandom()
    .$defaultFn(() => newId());
export const createdAtColumn = () =>
  instant('created_at')
    .notNull()
    .default(sql`clock_timestamp()`);
export const updatedAtColumn = () =>
  instant('updated_at')
    .notNull()
    .default(sql`clock_timestamp()`);

/** The next updatedAt of a row: now, but always at least 1 ms after the previous version. */
export const nextUpdatedAt = (column: AnyPgColumn) => sql`greatest(clock_timestamp(), ${column} + interval '1 millisecond')`;
