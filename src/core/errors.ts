export const errorStatus = {
  invalid_request: 400,
  unauthenticated: 401,
  api_key_invalid: 401,
  api_key_revoked: 401,
  forbidden: 403,
  insufficient_scope: 403,
  not_found: 404,
  no_availability: 409,
  conflict: 409,
  idempotency_in_progress: 409,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  rate_limited: 429,
  internal_error: 500,
  unavailable: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * Every `details.reason` the API answers with (docs/api.md "Requests"): typed, so that a service
 * cannot raise one the contract document does not list.
 */
export const errorReasons = [
  // 409 no_availability: the engine's verdict, a race lost to another booking, a hold that lapsed.
  'closed',
  'no_shift',
  'after_last_seating',
  'no_turn_time_rule',
  'no_table',
  'pacing_full',
  'table_blocked',
  'conflict',
  'hold_expired',
  // 429 rate_limited: a widget caller already keeps as many live slot holds as it may.
  'hold_limit',
  // 403 forbidden.
  'publishable_key',
  'venue_limited_key',
  'origin_not_allowed',
  // 409 conflict.
  'version_mismatch',
  'invalid_transition',
  'concurrent_change',
  'delivery_pending',
  'automation_archived',
  'secret_superseded',
  'endpoint_disabled',
  // 503 unavailable.
  'statement_timeout',
] as const;
export type ErrorReason = (typeof errorReasons)[number];

export interface ErrorDetails {
  fields?: string[];
  field?: string;
  requiredScope?: string;
  reason?: ErrorReason;
  alternatives?: unknown[];
  [key: string]: unknown;
}

const defaultMessages: Record<ErrorCode, string> = {
  invalid_request: 'The request is invalid.',
  unauthenticated: 'An Authorization header with a Bearer API key is required.',
  api_key_invalid: 'The API key is unknown or malformed.',
  api_key_revoked: 'The API key has been revoked.',
  forbidden: 'This operation is not allowed to this API key.',
  insufficient_scope: 'The API key lacks the scope this operation requires.',
  not_found: 'The resource does not exist or is not visible to this API key.',
  no_availability: 'There is no availability for this request.',
  conflict: 'The resource was changed concurrently.',
  idempotency_in_progress: 'A request with this Idempotency-Key is still running.',
  payload_too_large: 'The request body is too large.',
  idempotency_key_reused: 'This Idempotency-Key was used for another request.',
  rate_limited: 'Too many requests.',
  internal_error: 'Internal server error',
  unavailable: 'The service is temporarily unavailable.',
};

/** The only error type the API raises; the error handler turns it into the contract's body. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly details: ErrorDetails = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message ?? defaultMessages[code]);
    this.status = errorStatus[code];
  }

  static invalid(fields: string[], message?: string, extra: ErrorDetails = {}): ApiError {
    return new ApiError('invalid_request', message ?? `Invalid or missing: ${fields.join(', ')}.`, { fields, ...extra });
  }

  static notFound(what = 'Resource'): ApiError {
    return new ApiError('not_found', `${what} not found.`);
  }
}
