import { getTableName, type Column } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { openTransactionGuard, runSql, type DbOrTx } from './client.js';
import { columnsOf, decodeJsonRow } from './json-rows.js';

export interface InsertRowsOptions<T extends PgTable, K extends keyof T['$inferSelect'] & string> {
  /** Leaves out the rows a constraint refused. */
  onConflictDoNothing?: boolean;
  /**
   * The columns of a unique key: a row whose key is taken already is not inserted, and the row
   * there is returned in its place (a no-op update of the key's first column), so that a replay gets
   * the rows the first run made.
   */
  onConflictKeep?: ReadonlyArray<keyof T['$inferInsert'] & string>;
  /**
   * Columns whose value PostgreSQL computes, as SQL text without parameters, per row (e.g.
   * `clock_timestamp()`, or `default`): what the database's clock must decide.
   */
  computed?: { [C in keyof T['$inferInsert'] & string]?: (row: T['$inferInsert'], index: number) => string };
  /** The columns to return (all by default): a row's large columns need not travel back. */
  returning?: readonly K[];
  /**
   * false: the statement is not prepared. For bulk writes, whose many texts (one per row count)
   * would each stay prepared on the connection.
   */
  prepare?: boolean;
  /**
   * The transaction's last statement, sent with its COMMIT (TransactionOptions.sendWithCommit): sent
   * at once (runSql's `atOnce`), and its rows refused (a null in the first not-null column given a
   * value) unless the transaction it runs in is still open (openTransactionGuard): the driver may
   * send it again after that COMMIT.
   */
  withCommit?: boolean;
}

/**
 * Inserts rows with one statement of its own text, prepared (runSql, on the pool and in a
 * transaction alike), and returns them as drizzle's insert … returning() would: values encoded and
 * rows decoded by the table's own columns, a missing id taken from its default function. For the
 * hot write path (bookings, holds, their tables, events): drizzle's insert builder cost 0.28 ms of
 * CPU per booking for its row and tables and 0.18 ms for its event (docs/architecture.md "Write
 * path"). Statements given together (Promise.all) are pipelined on the connection.
 */
export async function insertRows<T extends PgTable, K extends keyof T['$inferSelect'] & string = keyof T['$inferSelect'] & string>(
  conn: DbOrTx,
  table: T,
  rows: readonly T['$inferInsert'][],
  options: InsertRowsOptions<T, K> = {},
): Promise<Array<Pick<T['$inferSelect'], K>>> {
  const columns = columnsOf(table);
  const computed = (options.computed ?? {}) as Record<string, ((row: T['$inferInsert'], index: number) => string) | undefined>;
  const given = columns.filter(
    ([key, column]) => column.defaultFn || computed[key] || rows.some((row) => (row as Record<string, unknown>)[key] !== undefined),
  );
  // A few rows (the hot path's): every value goes in one parameter, a text array, and each place
  // casts its element to the column's type: one parameter for the driver to describe and encode,
  // whatever the columns (a reservation has thirty; docs/architecture.md "Hot statements prepared").
  // Many rows (a bulk write's chunk): a parameter per value, since PostgreSQL reads the whole array
  // again at each place, which grows with the square of the values.
  const asOneArray = rows.length <= oneArrayRows;
  // The column whose value carries the guard of `withCommit`: null outside the transaction, refused.
  const guarded = options.withCommit ? given.find(([key, column]) => column.notNull && !computed[key])?.[0] : undefined;
  if (options.withCommit && !guarded)
    throw new Error(`insertRows: withCommit needs a not-null column given a value (${getTableName(table)})`);
  const values: Array<string | null> = [];
  const params: unknown[] = [];
  let text = `insert into "${getTableName(table)}" (${given.map(([, column]) => `"${column.name}"`).join(', ')}) values `;
  rows.forEach((row, index) => {
    text += index ? ', (' : '(';
    given.forEach(([key, column], i) => {
      if (i) text += ', ';
      const compute = computed[key];
      if (compute) return void (text += compute(row, index));
      let value = (row as Record<string, unknown>)[key];
      if (value === undefined && column.defaultFn) value = column.defaultFn();
      if (value === undefined) return void (text += 'default');
      let placed: string;
      if (asOneArray) {
        values.push(value === null ? null : textOf(column.mapToDriverValue(value)));
        placed = `($1::text[])[${values.length}]::${column.getSQLType()}`;
      } else {
        params.push(value === null ? null : column.mapToDriverValue(value));
        placed = `$${params.length}`;
      }
      text += key === guarded ? `case when ${openTransactionGuard} then ${placed} end` : placed;
    });
    text += ')';
  });
  const returned = options.returning ? columns.filter(([key]) => options.returning!.includes(key as K)) : columns;
  // Every column as `*`: the rows come back as objects keyed by column name either way, and a
  // traced statement's text is encoded into each of its spans (a reservation's list is 400 characters).
  const returnedList = returned.length === columns.length ? '*' : returned.map(([, column]) => `"${column.name}"`).join(', ');
  text += `${conflictClause(columns, options)} returning ${returnedList}`;
  // Its own text and parameters, straight to the driver: nothing for drizzle to render.
  if (values.length) params.push(values);
  const inserted = await runSql<Record<string, unknown>>(
    conn,
    { sql: text, params },
    { prepare: options.prepare, atOnce: options.withCommit },
  );
  return inserted.map((raw) => decodeJsonRow<Pick<T['$inferSelect'], K>>(returned, raw));
}

/** What an insert does with a row a unique constraint refuses (nothing: it fails). */
function conflictClause<T extends PgTable, K extends keyof T['$inferSelect'] & string>(
  columns: Array<[string, Column]>,
  options: InsertRowsOptions<T, K>,
): string {
  if (options.onConflictDoNothing) return ' on conflict do nothing';
  if (!options.onConflictKeep?.length) return '';
  const names = options.onConflictKeep.map((key) => `"${columns.find(([k]) => k === key)![1].name}"`);
  return ` on conflict (${names.join(', ')}) do update set ${names[0]} = excluded.${names[0]}`;
}

/** Up to this many rows, an insert's values go in one array parameter. */
const oneArrayRows = 8;

/** A driver value as the text PostgreSQL reads for its type (numbers, booleans; the rest is text already). */
function textOf(driverValue: unknown): string {
  return typeof driverValue === 'string' ? driverValue : String(driverValue);
}
