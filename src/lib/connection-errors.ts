import { hasSqlState } from './error-causes.js';

/**
 * Errors that mean a dependency (PostgreSQL) could not be reached, dropped the connection, or is not
 * the primary (any more), as opposed to errors of the request or the job itself: the API answers
 * them with 503 `unavailable`, and the workers run the job again later without counting an attempt.
 * During a failover each of these is met: the old primary's connections close or reset, it refuses
 * them or says it is shutting down or starting up, it comes back read-only, and a COMMIT under way
 * has no known outcome.
 */
const connectionErrorCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'CONNECT_TIMEOUT',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up or shutting down)
  '08000', // connection_exception
  '08003', // connection_does_not_exist
  '08006', // connection_failure
  '25006', // read_only_sql_transaction: a write reached a standby or a server fenced read-only
  '08007', // transaction_resolution_unknown: a COMMIT that failed or whose outcome is unknown (src/db/client.ts)
]);

/** Looks through `cause` chains (drizzle wraps driver errors) and AggregateErrors. */
export function isConnectionError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && connectionErrorCodes.has(code)) return true;
    if (e instanceof AggregateError && e.errors.some(isConnectionError)) return true;
  }
  return false;
}

/** PostgreSQL stopped the statement: it ran past statement_timeout, or its request's client left (query_canceled). */
export function isStatementCancelled(err: unknown): boolean {
  return hasSqlState(err, '57014');
}
