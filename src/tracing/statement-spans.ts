import { compactStatement, summariseStatement } from '../lib/sql-summary.js';
import { inSpan, isTracing, recordSpan, type SpanStart } from './tracing.js';

// A span per SQL statement (docs/operations.md "Tracing"): db.system.name postgresql, the operation,
// the table and the statement's text. The text is the one sent to PostgreSQL, its values as
// placeholders ($1, $2…): the values themselves (guest names, phones, notes) are never read here.
// It is shown compacted (compactStatement: the same statement for PostgreSQL, names unquoted and
// white space collapsed), once per text: the exporter encodes a span's every character again, and
// statement texts are most of what a process exports.

interface StatementSpan {
  name: string;
  start: SpanStart;
}

/**
 * The spans of the statements seen so far, by text: a process sends the same few hundred texts over
 * and over (its values are parameters), and reading each again cost a traced booking 0.1 ms. Bounded:
 * the texts of bulk writes (one per row count) do not pile up.
 */
const statementSpans = new Map<string, StatementSpan>();
const maxStatementSpans = 2000;

function statementSpan(text: string): StatementSpan {
  let known = statementSpans.get(text);
  if (!known) {
    if (statementSpans.size >= maxStatementSpans) statementSpans.clear();
    known = describeStatement(text);
    statementSpans.set(text, known);
  }
  return known;
}

function describeStatement(text: string): StatementSpan {
  const { operation, table } = summariseStatement(text);
  return {
    name: table ? `${operation} ${table}` : operation,
    start: {
      kind: 'client',
      attributes: {
        'db.system.name': 'postgresql',
        'db.operation.name': operation,
        'db.collection.name': table,
        'db.query.text': compactStatement(text),
      },
    },
  };
}

/**
 * drizzle's logger (its documented `logger` option): told of each statement drizzle issues, as it
 * issues it. Neither drizzle nor postgres.js says through its public API when a statement has been
 * answered, so these spans mark the moment a statement is sent, without a duration.
 */
export const statementLogger = {
  logQuery(query: string): void {
    const { name, start } = statementSpan(query);
    recordSpan(name, start);
  },
};

/** Runs a statement the project sends to the driver itself (src/db/client.ts runSql, prepareSql; prepareSelectAll) in its span, from sending to its rows. */
export function traceStatement<T>(text: string, run: () => Promise<T>): Promise<T> {
  if (!isTracing()) return run();
  const { name, start } = statementSpan(text);
  return inSpan(name, start, run);
}
