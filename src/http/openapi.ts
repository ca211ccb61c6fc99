import { z } from 'zod';
import { eventDataGroups } from '../services/events/event-service.js';
import { envelopeSchemaFor } from '../services/webhooks/envelope.js';
import { reservationEventTypes } from '../lib/event-catalogue.js';
import type { AnyRoute } from './define-route.js';
import type { MediaResponse } from '../core/route-definition.js';
import { exampleReservationEnvelope } from './openapi-examples.js';
import { ApiError, errorStatus, type ErrorCode } from '../core/errors.js';
import { contractRegistry, documentedSchemaOf, isComponentId } from '../core/response-schemas.js';

type Json = Record<string, unknown>;

const componentRef = (id: string) => `#/components/schemas/${id}`;

/**
 * uuid, date and date-time carry both a format and zod's long regex: the format says it, once. A
 * schema given its document form (documentAs) shows that form.
 */
function adjustJsonSchema({ zodSchema, jsonSchema }: { zodSchema: unknown; jsonSchema: Json }): void {
  const documented = documentedSchemaOf(zodSchema as z.ZodType);
  if (documented) {
    for (const key of Object.keys(jsonSchema)) delete jsonSchema[key];
    Object.assign(jsonSchema, structuredClone(documented));
    return;
  }
  if (jsonSchema.format && jsonSchema.pattern) delete jsonSchema.pattern;
}

const jsonSchemaOptions = { target: 'draft-2020-12', unrepresentable: 'any', override: adjustJsonSchema } as const;

/**
 * zod → JSON Schema 2020-12 (the dialect of OpenAPI 3.1). Registered resource schemas become
 * `$ref`s to their component instead of being repeated in every operation.
 */
function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  const registered = contractRegistry.get(schema);
  if (registered) return { $ref: componentRef(registered.id) };
  const json = z.toJSONSchema(schema, { ...jsonSchemaOptions, io, metadata: contractRegistry }) as Json;
  delete json.$schema;
  const defs = (json.$defs ?? {}) as Json;
  delete json.$defs;
  for (const id of Object.keys(defs)) if (!isComponentId(id)) throw new Error(`Schema ${id} is reused but not registered as a component`);
  return JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', `"${componentRef('')}`)) as Json;
}

function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(contractRegistry, { ...jsonSchemaOptions, io: 'output', uri: componentRef });
  const out: Json = {};
  for (const [id, schema] of Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) {
    const { $id: _id, $schema: _schema, ...rest } = schema as Json;
    out[id] = rest;
  }
  return out;
}

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

function parametersOf(schema: z.ZodObject<z.ZodRawShape> | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  return Object.entries(schema.shape).map(([name, field]) => {
    const json = toJsonSchema(field as z.ZodType, 'input');
    const { description, ...fieldSchema } = json;
    return {
      name,
      in: where,
      required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
      ...(description ? { description } : {}),
      schema: fieldSchema,
    };
  });
}

const writeMethods = new Set(['post', 'put', 'patch', 'delete']);

function namesVenue(schema: z.ZodType | undefined): boolean {
  return schema instanceof z.ZodObject && 'venueId' in schema.shape;
}

/** Every error code a route can answer: those that follow from its definition, plus its own `errors`. */
export function errorCodesOf(route: AnyRoute): ErrorCode[] {
  const codes = new Set<ErrorCode>(['internal_error']);
  const write = writeMethods.has(route.method);
  if (!route.public) {
    for (const code of ['unauthenticated', 'api_key_invalid', 'api_key_revoked', 'forbidden', 'rate_limited', 'unavailable'] as const)
      codes.add(code);
    if (route.scope) codes.add('insufficient_scope');
    if (write) {
      codes.add('idempotency_in_progress');
      codes.add('idempotency_key_reused');
    }
  }
  // A write's body is always read (an absent schema means `{}`), so it can be malformed or too large.
  if (route.query || route.body || write) codes.add('invalid_request');
  if (route.body || write) codes.add('payload_too_large');
  // A path id, or a venueId naming a venue the key cannot see, answers 404.
  if (route.params || namesVenue(route.query) || namesVenue(route.body)) codes.add('not_found');
  for (const code of route.errors ?? []) codes.add(code);
  return [...codes].sort((a, b) => errorStatus[a] - errorStatus[b] || a.localeCompare(b));
}

/** `livemode` is a top-level field of every JSON body answered to a key (docs/api.md "Requests"). */
function withLivemode(schema: z.ZodType): z.ZodType {
  if (schema instanceof z.ZodObject) return schema.extend({ livemode: z.boolean() });
  if (schema instanceof z.ZodUnion) return z.union((schema.options as z.ZodType[]).map(withLivemode));
  throw new Error('A JSON response body must be an object or a union of objects');
}

function isMediaResponse(value: unknown): value is MediaResponse {
  return !!value && typeof value === 'object' && 'content' in value && !(value instanceof z.ZodType);
}

const statusText: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No content',
  400: 'Invalid request',
  401: 'Not authenticated',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Payload too large',
  422: 'Idempotency-Key reused',
  429: 'Rate limited',
  500: 'Internal error',
  503: 'Unavailable',
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });
const rateLimitHeaders = {
  'X-RateLimit-Limit': headerRef('X-RateLimit-Limit'),
  'X-RateLimit-Remaining': headerRef('X-RateLimit-Remaining'),
  'X-RateLimit-Reset': headerRef('X-RateLimit-Reset'),
};

/** A GET of one resource (`{venue: {…, updatedAt}}`) answers its version as ETag (docs/api.md "Requests"). */
function sendsETag(route: AnyRoute, body: z.ZodType): boolean {
  if (route.method !== 'get' || !(body instanceof z.ZodObject)) return false;
  const values = Object.values(body.shape as z.ZodRawShape);
  return values.length === 1 && values[0] instanceof z.ZodObject && 'updatedAt' in values[0].shape;
}

/** An answer replayed for a repeated Idempotency-Key says so (writes of authenticated routes). */
function replayHeader(route: AnyRoute): Json {
  return writeMethods.has(route.method) && !route.public ? { 'Idempotent-Replayed': headerRef('Idempotent-Replayed') } : {};
}

/** The headers every answer of the route carries: its request id, and the rate-limit figures of an authenticated call. */
function commonHeaders(route: AnyRoute): Json {
  return { 'X-Request-Id': headerRef('X-Request-Id'), ...(route.public ? {} : rateLimitHeaders), ...replayHeader(route) };
}

function successResponses(route: AnyRoute): Json {
  const out: Json = {};
  const headers = commonHeaders(route);
  const declared = route.responses ?? {};
  for (const [status, body] of Object.entries(declared)) {
    const description = statusText[Number(status)] ?? 'Success';
    if (body === null || body === undefined) {
      out[status] = { description, headers };
    } else if (isMediaResponse(body)) {
      out[status] = { description: body.description, headers, content: body.content };
    } else {
      const schema = toJsonSchema(route.public ? body : withLivemode(body), 'output');
      const example =
        route.examples?.response !== undefined && Number(status) === (route.successStatus ?? 200)
          ? { example: route.examples.response }
          : {};
      const etag = sendsETag(route, body) ? { ETag: headerRef('ETag') } : {};
      out[status] = { description, headers: { ...headers, ...etag }, content: { 'application/json': { schema, ...example } } };
    }
  }
  return out;
}

function errorResponses(route: AnyRoute): Json {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(route)) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  const out: Json = {};
  for (const [status, codes] of byStatus) {
    out[String(status)] = {
      description: `${statusText[status]}: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      // 401 has no key to count against; 429 and 503 say when to come back.
      headers: {
        'X-Request-Id': headerRef('X-Request-Id'),
        ...(route.public || status === 401 ? {} : rateLimitHeaders),
        ...(status === 429 || status === 503 ? { 'Retry-After': headerRef('Retry-After') } : {}),
        // A stored 4xx (not 409 or 429) is replayed like a success.
        ...(status < 500 && status !== 409 && status !== 429 && status !== 401 ? replayHeader(route) : {}),
      },
      // The Error component, its code narrowed to the codes this operation answers with this status.
      content: {
        'application/json': {
          // The narrowing branch leaves the other fields to the Error component (explicitly open, so that
          // validators that close schemas by default still read the two branches together).
          schema: {
            allOf: [
              { $ref: componentRef('Error') },
              {
                type: 'object',
                properties: {
                  error: { type: 'object', properties: { code: { type: 'string', enum: codes } }, additionalProperties: true },
                },
                additionalProperties: true,
              },
            ],
          },
          example: errorExample(route, codes[0]),
        },
      },
    };
  }
  return out;
}

/** One true error body of this operation for `code`: its default message and the details it carries. */
function errorExample(route: AnyRoute, code: ErrorCode): Json {
  const details: Json =
    code === 'invalid_request'
      ? { fields: ['partySize'] }
      : code === 'insufficient_scope'
        ? { requiredScope: route.scope ?? 'reservations:read' }
        : code === 'no_availability'
          ? { reason: 'no_table', alternatives: [] }
          : code === 'forbidden'
            ? { reason: 'publishable_key' }
            : {};
  return {
    error: { code, message: new ApiError(code).message, details, requestId: '6f1c2a9e-4b7d-4e21-9c3a-8d5e0f7a1b22' },
    ...(route.public || errorStatus[code] === 401 ? {} : { livemode: true }),
  };
}

/** A stable operationId: the route's own, else the method and the static path segments. */
export function operationIdOf(route: AnyRoute): string {
  if (route.operationId) return route.operationId;
  const words = route.path
    .split('/')
    .filter((s) => s && !s.startsWith(':'))
    .flatMap((s) => s.split(/[-.]/));
  return route.method + words.map((w) => w[0].toUpperCase() + w.slice(1)).join('');
}

const signingScheme = [
  'Each delivery is a POST with `Content-Type: application/json` and `User-Agent: service-webhook/1`, signed with HMAC-SHA256.',
  '',
  'The signed string is four lines joined by a line feed (`\\n`): the literal `v1`, the value of `X-Service-Timestamp`, the value of',
  '`X-Service-Idempotency-Key`, and the request body byte for byte. The lowercase hex digest travels in `X-Service-Signature` as',
  '`v1=<hex>`; during a secret rotation the header holds two signatures, `v1=<new>,v1=<previous>`, and one valid signature suffices.',
  "The key is the UTF-8 bytes of the whole secret (`whsec_…`): the destination's own secret for a registered destination, else the",
  'organisation secret.',
  '',
  'A registered destination created with `signatureScheme: "standard-webhooks"` is signed as Standard Webhooks libraries verify',
  'instead: `webhook-id` (the idempotency key), `webhook-timestamp` (Unix seconds) and `webhook-signature`, `v1,<base64 HMAC-SHA256>`',
  'of `<webhook-id>.<webhook-timestamp>.<body>` keyed with the base64 decoding of what follows `whsec_` in the secret; during a',
  'rotation two signatures separated by a space. The X-Service headers are then not sent.',
  '',
  'To verify: read the body as raw bytes before parsing; reject a timestamp more than 5 minutes from now; compute the expected',
  'signature and compare it with each signature of the header in constant time; answer 200 without processing again an',
  'idempotency key already processed. Answer 2xx within 10 s; anything else (3xx included) is retried at +1 min, +5 min, +15 min',
  'and +1 h, with the same body and idempotency key and a fresh timestamp and signature; after the fifth failure the delivery is',
  'discarded (GET /webhook-deliveries?status=discarded).',
].join('\n');

const webhookDescriptions: Record<string, string> = {
  reservation_created: 'A reservation is created.',
  reservation_confirmed: 'The reservation passes to confirmed.',
  reservation_modified: 'Day, time, party size or notes change.',
  reservation_cancelled: 'The reservation passes to cancelled.',
  guest_arrived: 'The reservation passes to arrived.',
  guest_seated: 'The reservation passes to seated.',
  table_released: 'The table is freed.',
  meal_completed: 'The reservation passes to completed.',
  reservation_late: 'The time has passed and the guest has not arrived.',
  reservation_no_show: 'The no-show tolerance is exceeded.',
  reservation_needs_attention: 'The reservation is valid but must be arranged on the floor.',
  waitlist_entry_created: 'A guest enters the waiting list.',
  waitlist_entry_cancelled: 'An entry is removed from the waiting list.',
  compatible_table_freed: 'A table suitable for a waiting-list entry is freed.',
  guest_profile_changed: 'A guest is created or the profile changes (`reason`: guest_created, profile_changed or service_tags_changed).',
  webhook_test: 'Test event sent by POST /webhook-endpoints/test.',
};

/** The signed headers of each scheme: a delivery carries one set, the one of its destination's signatureScheme. */
const serviceSignatureHeaders = ['X-Service-Signature', 'X-Service-Timestamp', 'X-Service-Idempotency-Key'];
const standardSignatureHeaders = ['webhook-id', 'webhook-timestamp', 'webhook-signature'];

function webhooks(): Json {
  const out: Json = {};
  for (const group of eventDataGroups) {
    for (const type of group.types) {
      out[type] = {
        post: {
          operationId: `webhook_${type}`,
          summary: webhookDescriptions[type],
          description: signingScheme,
          tags: ['Webhooks'],
          security: [],
          parameters: [...serviceSignatureHeaders, ...standardSignatureHeaders].map((name) => ({
            $ref: `#/components/parameters/${name}`,
          })),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: toJsonSchema(envelopeSchemaFor([type], group.data), 'output'),
                ...((reservationEventTypes as readonly string[]).includes(type) ? { example: exampleReservationEnvelope(type) } : {}),
              },
            },
          },
          responses: {
            '200': { description: 'Any 2xx within 10 seconds acknowledges the delivery.' },
            '400': { description: 'Any other answer (3xx included), a timeout or a network error is a failed attempt, retried.' },
          },
        },
      };
    }
  }
  return out;
}

const tagDescriptions: Record<string, string> = {
  Meta: 'The calling key, service status, this document.',
  Venues: 'Venues of the organisation.',
  'Venue configuration': 'Shifts, closures, turn-time rules and pacing rules of a venue.',
  Floor: 'Floor plans, areas and tables.',
  Availability: 'Bookable times.',
  Reservations: 'Bookings and their progress through the service.',
  'Waiting list': 'Parties waiting for a seat.',
  Guests: 'The guest address book and service tags.',
  Imports: 'Bulk imports of guests and reservations.',
  Events: 'The event history.',
  Automations: 'Rules that turn events into webhook deliveries.',
  Webhooks: 'Destinations, deliveries and signing secrets; the webhooks section describes what is delivered.',
  Reports: 'Figures over days and slots.',
  Exports: 'Reservations as CSV or ndjson.',
};

/**
 * zod writes the safe-integer range (±2^53 − 1) as the bounds of every integer it was not given
 * bounds for: noise to a reader, and a generator's example of `-9007199254740991` seats. Those are
 * dropped; the real bounds of the schemas stay.
 */
function withoutUnboundedIntegers<T>(node: T): T {
  if (Array.isArray(node)) return node.map(withoutUnboundedIntegers) as T;
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'minimum' && value === Number.MIN_SAFE_INTEGER) || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)) continue;
    out[key] = withoutUnboundedIntegers(value);
  }
  return out as T;
}

/** The OpenAPI 3.1 document, built from the very zod schemas that validate requests and describe responses. */
export function buildOpenApi(routes: AnyRoute[]) {
  return withoutUnboundedIntegers(buildDocument(routes));
}

function buildDocument(routes: AnyRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    tags.add(route.tag);
    const descriptionParts = [route.description];
    if (route.scope) descriptionParts.push(`Scope: \`${route.scope}\`.`);
    if (route.widget) descriptionParts.push('Also open to publishable (widget) keys from their allowed origins.');
    if (route.organisationWide) descriptionParts.push('Refused (403) to keys limited to certain venues.');
    const idempotencyHeader = writeMethods.has(route.method) && !route.public ? [{ $ref: '#/components/parameters/Idempotency-Key' }] : [];
    const ifMatchHeader = route.ifMatch ? [{ $ref: '#/components/parameters/If-Match' }] : [];
    const requestExample = route.examples?.request !== undefined ? { example: route.examples.request } : {};
    paths[path][route.method] = {
      operationId: operationIdOf(route),
      summary: route.summary,
      // Never empty: the summary stands in for an operation without more to say.
      description: descriptionParts.filter(Boolean).join(' ') || route.summary,
      tags: [route.tag],
      security: route.public ? [] : [{ bearer: [] }],
      parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query'), ...idempotencyHeader, ...ifMatchHeader],
      // A write without a body counts as `{}`: the body is required only when `{}` is not valid.
      ...(route.body
        ? {
            requestBody: {
              required: !route.body.safeParse({}).success,
              // Closed, as the server refuses unknown top-level fields (400 naming them).
              content: {
                'application/json': {
                  schema: toJsonSchema(route.body instanceof z.ZodObject ? route.body.strict() : route.body, 'input'),
                  ...requestExample,
                },
              },
            },
          }
        : {}),
      responses: { ...successResponses(route), ...errorResponses(route) },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Reservation and Floor Management API',
      version: '1.0.0',
      description:
        'JSON API for restaurant reservations and floor management. Every JSON body answered to a key carries `livemode`; ' +
        'every response carries `X-Request-Id`. See docs/api.md for the decisions behind each behaviour.',
      license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' },
      contact: { name: 'Floorline maintainers', url: 'https://floorline.example/support' },
    },
    // Absolute, so that a client generated from the document calls a server unconfigured: the first
    // (a local `npm start`) for generators that take servers[0] as it is, the second for any host.
    servers: [
      { url: 'http://127.0.0.1:3000/api/v1', description: 'A local server (`npm start` on the default PORT).' },
      {
        url: '{scheme}://{host}/api/v1',
        description: 'Any server of this API.',
        variables: {
          scheme: { enum: ['http', 'https'], default: 'http' },
          host: { default: '127.0.0.1:3000', description: 'Host name and port.' },
        },
      },
    ],
    tags: [...tags].map((name) => ({ name, description: tagDescriptions[name] ?? name })),
    paths,
    webhooks: webhooks(),
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `gsk_…`, `gsk_test_…` or a publishable `gspk_…`.' },
      },
      schemas: componentSchemas(),
      parameters: {
        'Idempotency-Key': {
          name: 'Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Replays the stored answer of the same operation and body for 24 h (`Idempotent-Replayed: true`).',
          schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
        },
        'If-Match': {
          name: 'If-Match',
          in: 'header',
          required: false,
          description:
            "The version read earlier (the resource's `updatedAt`, or its ETag), quoted or bare: a resource changed since answers 409 `conflict` with `details.reason: version_mismatch`.",
          schema: { type: 'string' },
        },
        'X-Service-Signature': {
          name: 'X-Service-Signature',
          in: 'header',
          required: false,
          description:
            'Scheme `service-v1` (the default): `v1=<lowercase hex HMAC-SHA256>`; during a rotation two signatures separated by a comma.',
          schema: { type: 'string', pattern: '^v1=[0-9a-f]{64}(,v1=[0-9a-f]{64})?$' },
        },
        'X-Service-Timestamp': {
          name: 'X-Service-Timestamp',
          in: 'header',
          required: false,
          description: 'Scheme `service-v1`: instant of the signature, Unix seconds; part of the signed string.',
          schema: { type: 'string', pattern: '^\\d+$' },
        },
        'X-Service-Idempotency-Key': {
          name: 'X-Service-Idempotency-Key',
          in: 'header',
          required: false,
          description: 'Scheme `service-v1`: the delivery key, identical at every attempt; equals the envelope `id`.',
          schema: { type: 'string' },
        },
        'webhook-id': {
          name: 'webhook-id',
          in: 'header',
          required: false,
          description: 'Scheme `standard-webhooks`: the delivery key, identical at every attempt; equals the envelope `id`.',
          schema: { type: 'string' },
        },
        'webhook-timestamp': {
          name: 'webhook-timestamp',
          in: 'header',
          required: false,
          description: 'Scheme `standard-webhooks`: instant of the signature, Unix seconds; part of the signed content.',
          schema: { type: 'string', pattern: '^\\d+$' },
        },
        'webhook-signature': {
          name: 'webhook-signature',
          in: 'header',
          required: false,
          description:
            'Scheme `standard-webhooks`: `v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>`; during a rotation two signatures separated by a space.',
          schema: { type: 'string', pattern: '^v1,[A-Za-z0-9+/]{43}=( v1,[A-Za-z0-9+/]{43}=)?$' },
        },
      },
      headers: {
        'Retry-After': { description: 'Seconds to wait before repeating.', schema: { type: 'integer' } },
        'X-Request-Id': {
          description: "The request's id (the one sent, when well formed); also `error.requestId` of an error.",
          schema: { type: 'string' },
        },
        'X-RateLimit-Limit': { description: 'Requests allowed per minute to this key.', schema: { type: 'integer' } },
        'X-RateLimit-Remaining': { description: 'Requests left in the current minute.', schema: { type: 'integer' } },
        'X-RateLimit-Reset': { description: 'Unix seconds at which the current window ends.', schema: { type: 'integer' } },
        ETag: { description: 'The resource\'s version (`"<updatedAt>"`), usable as If-Match.', schema: { type: 'string' } },
        'Idempotent-Replayed': {
          description: '`true` on an answer replayed for a repeated Idempotency-Key (the stored body, byte for byte).',
          schema: { type: 'string', enum: ['true'] },
        },
      },
    },
  };
}
