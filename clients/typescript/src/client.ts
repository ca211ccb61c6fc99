import createClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './schema.js';

export type { paths } from './schema.js';

/** The typed client: `client.GET('/reservations/{id}', { params: { path: { id } } })` and so on, every path and body from the OpenAPI document. */
export type FloorlineClient = Client<paths>;

export interface FloorlineClientOptions {
  /** The API prefix, ending with /api/v1 (e.g. `https://api.example.com/api/v1`). */
  baseUrl: string;
  /** A `gsk_…`, `gsk_test_…` or `gspk_…` key, sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Another fetch (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export function createFloorlineClient(options: FloorlineClientOptions): FloorlineClient {
  return createClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { Authorization: `Bearer ${options.apiKey}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/**
 * The `Idempotency-Key` header of a write, as `params: { header: idempotencyKey() }` (typed by the
 * document on the operations that take it) or as `headers`: a retry with the same key and body
 * returns the first answer instead of acting twice. Keep the object to retry with it.
 */
export function idempotencyKey(key: string = globalThis.crypto.randomUUID()): { 'Idempotency-Key': string } {
  return { 'Idempotency-Key': key };
}

/** The error body of every operation (docs/api.md "Requests"). */
export type ErrorBody = components['schemas']['Error'];
export type ErrorCode = ErrorBody['error']['code'];

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const { error } = value;
  return typeof error === 'object' && error !== null && 'code' in error && typeof error.code === 'string';
}

/** A non-2xx answer. `body` is the contract's error body; it is undefined when the answer had none (405, or a proxy's page). */
export class FloorlineApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode | undefined;
  readonly body: ErrorBody | undefined;
  readonly requestId: string | null;

  constructor(response: Response, body: unknown) {
    const errorBody = isErrorBody(body) ? body : undefined;
    super(errorBody ? `${response.status} ${errorBody.error.code}: ${errorBody.error.message}` : `HTTP ${response.status}`);
    this.name = 'FloorlineApiError';
    this.status = response.status;
    this.body = errorBody;
    this.code = errorBody?.error.code;
    this.requestId = response.headers.get('x-request-id');
  }
}

/** What every openapi-fetch call resolves to: `{ data, response }` or `{ error, response }`. */
type Outcome = { data?: unknown; error?: unknown; response: Response };
type Succeeded<Result> = Extract<Result, { error?: never }>;

// openapi-fetch leaves `error` undefined for an error answer without a body: the status decides.
function succeeded<Result extends Outcome>(result: Result): result is Succeeded<Result> {
  return result.error === undefined && result.response.ok;
}

/** The data of a 2xx answer, or a FloorlineApiError: `const { reservation } = await dataOrThrow(client.POST('/reservations', …))`. */
export async function dataOrThrow<Result extends Outcome>(pending: Promise<Result>): Promise<Succeeded<Result>['data']> {
  const result = await pending;
  if (succeeded(result)) return result.data;
  throw new FloorlineApiError(result.response, result.error);
}
