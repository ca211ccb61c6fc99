import type { z } from 'zod';
import { ApiError } from './errors.js';

/**
 * The framework-free parts of a route definition: what a handler returns and what the document says
 * it answers. The Express-bound definition (its request context) is src/http/define-route.ts.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface RouteResult {
  status?: number;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** A response that is not JSON (CSV, ndjson, event stream): its media types, described in words. */
export interface MediaResponse {
  description: string;
  content: Record<string, { schema: Record<string, unknown>; example?: string }>;
}

/**
 * The documented success answers of a route: status → zod schema of the JSON body (without
 * `livemode`, which the document adds for authenticated routes), `null` for no body (204), or a
 * non-JSON MediaResponse. The OpenAPI document and the tests' conformance check read it.
 */
export type RouteResponses = Partial<Record<200 | 201 | 202 | 204, z.ZodType | MediaResponse | null>>;

const idempotencyKeyPattern = /^[\x21-\x7e]{1,255}$/;

/** An Idempotency-Key as the contract allows it (1 to 255 printable characters), or the 400 naming it. */
export function checkIdempotencyKey(key: string): string {
  if (!idempotencyKeyPattern.test(key))
    throw ApiError.invalid(['Idempotency-Key'], 'Idempotency-Key must be 1 to 255 printable characters.');
  return key;
}
