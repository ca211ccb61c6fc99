import { getTableColumns, getTableName, is, Placeholder, sql, type Column, type SQL } from 'drizzle-orm';
import { QueryBuilder, type PgTable } from 'drizzle-orm/pg-core';
import { traceStatement } from '../tracing/statement-spans.js';
import { pool } from './client.js';

/** The values of `extra`'s expressions, as the driver reads them. */
type ExtraValues<E extends Record<string, SQL>> = { [K in keyof E]: E[K] extends SQL<infer V> ? V : unknown };

/**
 * `column` named with its table ("events"."venue_id") wherever it is written. In the select list of a
 * query of one table drizzle writes a column bare ("venue_id"), also inside an expression: in a
 * subquery, a bare name is the subquery's own column when one of its tables has it (an `exists`
 * about the event's venue asked about every venue). An expression of `extra` that reads the
 * table's row in a subquery names its columns with this.
 */
export function qualifiedColumn(column: Column): SQL {
  return sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;
}

/**
 * `select * from <table> where <condition>` built by drizzle once, run as a prepared statement
 * straight on the driver, its rows decoded by the table's own columns: the rows drizzle returns.
 * For the reads on nearly every request. Drizzle's own prepared query runs each execution through
 * four nested async functions, a tracing wrapper and a cache check, and decodes each column with a
 * type test and an iterator: a tenth of a simple request's CPU. `extra`: expressions selected after
 * the columns, each under its name, as the driver reads it (a boolean, a number); a column of the
 * table in a subquery of theirs is written with qualifiedColumn.
 */
export function prepareSelectAll<T extends PgTable, E extends Record<string, SQL> = Record<never, SQL>>(
  table: T,
  condition: SQL,
  extra?: E,
): (values: Record<string, unknown>) => Promise<Array<T['$inferSelect'] & ExtraValues<E>>> {
  const tableColumns = getTableColumns(table);
  // In the order of the select list drizzle writes: the table's columns, then the extra expressions.
  const columns = Object.entries(tableColumns);
  const extraNames = Object.keys(extra ?? {});
  // drizzle's standalone query builder: the statement is built without a database (this runs when
  // the calling module is loaded).
  const query = new QueryBuilder()
    .select({ ...tableColumns, ...extra })
    .from(table as PgTable)
    .where(condition)
    .toSQL();
  return async (values) => {
    const params = query.params.map((param) => (is(param, Placeholder) ? values[param.name] : param));
    const rows = await traceStatement(query.sql, () =>
      pool()
        .unsafe(query.sql, params as never[], { prepare: true })
        .values(),
    );
    return rows.map((row) => {
      const decoded: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) {
        const value = row[i];
        decoded[columns[i][0]] = value === null ? null : columns[i][1].mapFromDriverValue(value);
      }
      for (let i = 0; i < extraNames.length; i++) decoded[extraNames[i]] = row[columns.length + i];
      return decoded as T['$inferSelect'] & ExtraValues<E>;
    });
  };
}
