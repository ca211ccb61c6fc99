import { sql } from 'drizzle-orm';
import { timestamp, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';

/** Instants are kept to the millisecond: updatedAt doubles as the If-Match version. */
export const instant = (name: string) => timestamp(name, { withTimezone: true, precision: 3, mode: 'date' });

export const idColumn = () => uuid('id').primaryKey().defaultRandom();
export const createdAtColumn = () => instant('created_at').notNull().default(sql`clock_timestamp()`);
export const updatedAtColumn = () => instant('updated_at').notNull().default(sql`clock_timestamp()`);

/** The next updatedAt of a row: now, but always at least 1 ms after the previous version. */
export const nextUpdatedAt = (column: AnyPgColumn) => sql`greatest(clock_timestamp(), ${column} + interval '1 millisecond')`;
