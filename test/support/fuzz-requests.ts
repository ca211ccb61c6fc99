import fc from 'fast-check';

/**
 * Requests generated from the OpenAPI document with fast-check, for the fuzz test
 * (test/integration/fuzz-api.test.ts) and its longer run (bench/fuzz.ts). Every operation gets
 * requests its schemas accept, and the same requests with one thing wrong: a value of the wrong
 * type, a bound crossed by one, a huge or empty string, text PostgreSQL cannot hold, a date at an
 * end of the calendar, an unknown field, a body that is not JSON or not sent as JSON.
 */

type Json = Record<string, any>;

export interface FuzzOperation {
  method: string;
  /** The document's path, `{param}` placeholders included. */
  path: string;
  op: Json;
}

/** What the generated values draw on to reach past a 404: the tenant's venue and ids of its resources. */
export interface FuzzTargets {
  venueId: string;
  /** Ids by the document path of their collection, e.g. `/reservations` or `/venues/{id}/shifts`. */
  ids: Record<string, string[]>;
}

export interface FuzzRequest {
  method: string;
  /** Path and query string, percent-encoded, relative to /api/v1. */
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** What was made wrong, or `valid`. */
  variant: string;
}

export function operationsOf(document: Json): FuzzOperation[] {
  return Object.entries(document.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ method: method.toUpperCase(), path, op: op as Json })),
  );
}

const httpDate = 'Sat, 01 Jan 275760 00:00:00 GMT';
/** Dates and instants near the ends of the calendar, in odd notations, and impossible ones. */
const edgeDates = [
  '0000-01-01',
  '0001-01-01',
  '0001-01-02',
  '0001-01-03',
  '9999-12-27',
  '9999-12-28',
  '9999-12-29',
  '9999-12-30',
  '9999-12-31',
  '10000-01-01',
  '+010000-01-01',
  '2026-02-29',
  '2028-02-29',
  '2026-02-30',
  '2026-13-01',
  '2026-1-1',
];
const edgeInstants = [
  '0000-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00+01:00',
  '0001-01-01T00:00:00.000-14:00',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59-14:00',
  '9999-12-31T23:59:59.9999999Z',
  '+010000-01-01T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '1970-01-01T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T24:00:00Z',
  '2026-01-01T00:00:60Z',
  httpDate,
];
/** Well-formed dates and instants at the ends of the calendar and of the range the API takes. */
const calendarEndDates = ['0000-12-31', '0001-01-01', '0001-01-02', '9999-12-28', '9999-12-29', '9999-12-31'];
const calendarEndInstants = [
  '0000-12-31T23:59:59.999Z',
  '0001-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  '9999-12-31T23:59:59-14:00',
];
/** Text at the edges of Unicode and of what PostgreSQL stores. */
const edgeTexts = ['\ud800', 'a\udc00b', '\u0000', "\ud83d\ude00\uffffe\u0301\ufeff\u202e\u2028\\'; select 1; --%00"];

/** A huge string: over every maxLength of the document, under the 1 MiB body limit unless repeated. */
const huge = (length: number) => 'x'.repeat(length);

function resolve(schema: Json, document: Json): Json {
  let s = schema;
  while (s && typeof s.$ref === 'string')
    s = s.$ref
      .split('/')
      .slice(1)
      .reduce((node: Json, key: string) => node[key], document);
  return s ?? {};
}

const today = new Date();
const isoDay = (offsetDays: number) =>
  new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() + offsetDays)).toISOString().slice(0, 10);

/** A string the schema accepts; `name` steers ids, phones and dates towards values that reach the database. */
function validString(s: Json, name: string, targets: FuzzTargets): fc.Arbitrary<string> {
  if (s.format === 'uuid') {
    if (name === 'venueId') return fc.oneof({ weight: 8, arbitrary: fc.constant(targets.venueId) }, { weight: 1, arbitrary: fc.uuid() });
    const known = Object.values(targets.ids).flat();
    return known.length ? fc.oneof(fc.constantFrom(...known), fc.uuid()) : fc.uuid();
  }
  if (s.format === 'date')
    return fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: -2, max: 40 }).map(isoDay) },
      { weight: 1, arbitrary: fc.constantFrom('0001-01-02', '9999-12-28') },
    );
  if (s.format === 'date-time')
    return fc.oneof(
      fc.date({ min: new Date('2000-01-01'), max: new Date('2040-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
      fc.constantFrom('0001-01-01T00:00:00.000Z', '9999-12-31T23:59:59.999Z'),
    );
  if (s.format === 'email') return fc.emailAddress();
  if (s.format === 'uri') return fc.webUrl({ validSchemes: ['https'] });
  if (s.pattern)
    return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity));
  if (/phone/i.test(name)) return fc.constantFrom('06 1234 5678', '+39 347 111 2222', '+44 20 7946 0958', '555');
  const minLength = s.minLength ?? 0;
  const maxLength = Math.max(minLength, Math.min(s.maxLength ?? 30, 30));
  return fc
    .oneof(fc.string({ minLength, maxLength }), fc.string({ minLength, maxLength, unit: 'grapheme' }))
    .filter((v) => v.trim().length >= minLength);
}

/** A value the schema accepts (as far as a schema can say: the server's rules may still refuse it). */
function validValue(schema: Json, document: Json, targets: FuzzTargets, name = '', depth = 0): fc.Arbitrary<unknown> {
  const s = resolve(schema, document);
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...(s.enum as unknown[]));
  const branches = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (branches) return fc.oneof(...branches.map((b) => validValue(b, document, targets, name, depth)));
  if (s.allOf)
    return validValue(Object.assign({}, ...(s.allOf as Json[]).map((b) => resolve(b, document))), document, targets, name, depth);
  if (Array.isArray(s.type))
    return fc.oneof(...(s.type as string[]).map((type) => validValue({ ...s, type }, document, targets, name, depth)));
  switch (s.type) {
    case 'string':
      return validString(s, name, targets);
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
    case 'number':
      return fc.double({ min: s.minimum ?? -1000, max: s.maximum ?? 1000, noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const minLength = s.minItems ?? 0;
      return fc.array(validValue(s.items ?? {}, document, targets, name, depth + 1), {
        minLength,
        maxLength: Math.max(minLength, Math.min(s.maxItems ?? 3, 3)),
      });
    }
    case 'object': {
      const properties = (s.properties ?? {}) as Json;
      const required = (s.required ?? []) as string[];
      if (depth > 4) return fc.constant({});
      // A record of any keys (an import row): a few keys of any name, values of any kind.
      if (!Object.keys(properties).length && s.additionalProperties) {
        const values = s.additionalProperties === true ? {} : (s.additionalProperties as Json);
        return fc.dictionary(fc.string({ maxLength: 12 }), validValue(values, document, targets, '', depth + 1), { maxKeys: 4 });
      }
      const shape = Object.fromEntries(
        Object.entries(properties).map(([key, child]) => [key, validValue(child as Json, document, targets, key, depth + 1)]),
      );
      return fc.record(shape, { requiredKeys: required.filter((k) => k in shape) });
    }
    default:
      // Any value: mostly text, the commonest kind of a free-form field (an import row's).
      return fc.oneof({ weight: 2, arbitrary: fc.string({ maxLength: 20 }) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }) });
  }
}

const wrongTypes: unknown[] = [12, -1, 1.5, true, null, [], {}, 'text', [1, 2], { nested: { deeper: [null] } }];

/** The values at a schema's bounds and one beyond (numbers, string lengths, array lengths, enums). */
function boundValues(schema: Json, document: Json): unknown[] {
  const s = resolve(schema, document);
  const values: unknown[] = [];
  for (const b of [s, ...((s.anyOf ?? s.oneOf ?? []) as Json[]).map((x) => resolve(x, document))]) {
    if (b.type === 'integer' || b.type === 'number') {
      values.push(...[b.minimum, b.maximum].flatMap((n) => (typeof n === 'number' ? [n - 1, n, n + 1] : [])), 2 ** 31, 2 ** 53, 1e308, 0.5);
    }
    if (b.type === 'string') {
      values.push(...[b.minLength, b.maxLength].flatMap((n) => (typeof n === 'number' ? [Math.max(0, n - 1), n, n + 1] : [])).map(huge));
      if (b.enum) values.push(...(b.enum as string[]).map((v) => ` ${v.toUpperCase()}`));
      if (b.format === 'date') values.push(...edgeDates);
      if (b.format === 'date-time') values.push(...edgeInstants);
      if (b.format === 'uuid') values.push('00000000-0000-0000-0000-000000000000', '0000000-0000-0000-0000-000000000000');
    }
    if (b.type === 'array') {
      values.push(
        ...[b.minItems, b.maxItems]
          .flatMap((n) => (typeof n === 'number' ? [Math.max(0, n - 1), n + 1] : []))
          .map((n) => Array.from({ length: n }, () => 'x')),
      );
    }
  }
  return values;
}

const isDateSchema = (s: Json) => s.format === 'date' || s.format === 'date-time';
const isStringSchema = (s: Json, document: Json) =>
  s.type === 'string' || ((s.anyOf ?? s.oneOf ?? []) as Json[]).some((b) => resolve(b, document).type === 'string');

interface Slot {
  where: 'query' | 'body';
  at: (string | number)[];
  schema: Json;
}

/** The places of a body a mutation may hit: each property, down to the objects inside arrays (import rows). */
function bodySlots(schema: Json, document: Json, at: (string | number)[] = [], depth = 0): Slot[] {
  const s = resolve(schema, document);
  const here: Slot[] = at.length ? [{ where: 'body', at, schema: s }] : [];
  if (depth > 3) return here;
  if (s.type === 'object' && s.properties) {
    return [
      ...here,
      ...Object.entries(s.properties as Json).flatMap(([key, child]) => bodySlots(child as Json, document, [...at, key], depth + 1)),
    ];
  }
  if (s.type === 'array' && s.items) return [...here, ...bodySlots(s.items as Json, document, [...at, 0], depth + 1)];
  const branches = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  if (branches)
    return [...here, ...branches.flatMap((b) => bodySlots(b, document, at, depth + 1).filter((slot) => slot.at.length > at.length))];
  return here;
}

function setAt(root: unknown, at: (string | number)[], value: unknown): unknown {
  if (!at.length) return value;
  const [head, ...rest] = at;
  const container: any =
    typeof head === 'number'
      ? Array.isArray(root)
        ? [...root]
        : []
      : root && typeof root === 'object' && !Array.isArray(root)
        ? { ...root }
        : {};
  container[head] = setAt(container[head], rest, value);
  return container;
}

/** Every string value of a value passed through `change` (keys stay: the unknown-field family names odd keys). */
function mapStrings(value: unknown, change: (s: string) => string): unknown {
  if (typeof value === 'string') return change(value);
  if (Array.isArray(value)) return value.map((v) => mapStrings(v, change));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapStrings(v, change)]));
  return value;
}

/**
 * Node refuses a request head over 16 KiB itself (431, before the app): a query value is cut to what
 * still reaches the app.
 */
const queryValueLimit = 4000;

/** A query name or value as sent: percent-encoded where it can be, raw bytes (an invalid UTF-8 sequence) where it cannot. */
function encodeQueryValue(value: unknown): string {
  const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).slice(0, queryValueLimit);
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate has no UTF-8 form: send the bytes a careless client would.
    return '%ED%A0%80';
  }
}

function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/\{([A-Za-z]+)\}/g, (_m, name: string) => encodeURIComponent(params[name]));
}

/** The ids a path parameter draws on: those of the collection the parameter names, and some that exist nowhere. */
function pathParam(path: string, name: string, targets: FuzzTargets): fc.Arbitrary<string> {
  const collection = path.slice(0, path.indexOf(`{${name}}`) - 1);
  const known = collection === '/venues' ? [targets.venueId] : (targets.ids[collection] ?? []);
  const missing = fc.oneof(fc.uuid(), fc.constantFrom('not-a-uuid', '%', '..', '00000000-0000-0000-0000-000000000000', 'ａ'));
  return known.length ? fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: missing }) : missing;
}

const badBodies = [
  '',
  '{',
  '[]',
  'null',
  '"text"',
  '1e999',
  '{"a":1,"a":2}',
  '\ufeff{}',
  `{"rows":${'['.repeat(5000)}${']'.repeat(5000)}}`,
  '{"x":"\\ud800"}',
  '{"x":"\\u0000"}',
];
const contentTypes = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'multipart/form-data; boundary=x',
  'application/xml',
];
const idempotencyKeys = ['', ' ', 'k'.repeat(256), 'cl\u00e9', 'fuzz-key'];
const ifMatchValues = [
  '*',
  '"',
  '""',
  'W/"x"',
  '1',
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:59.999Z',
  httpDate,
  '-271821-04-20T00:00:00Z',
  '2026',
];

/** A request in the making: the valid one a family then makes wrong. */
interface Draft {
  query: Json;
  body: unknown;
  headers: Record<string, string>;
  rawBody?: string;
}

type Change = (draft: Draft) => void;

/** One kind of wrong (or `valid`), and the requests of that kind. */
export interface RequestFamily {
  name: string;
  requests: fc.Arbitrary<FuzzRequest>;
}

function setSlot(draft: Draft, slot: Slot, value: unknown): void {
  if (slot.where === 'query') draft.query[slot.at[0]] = value;
  else draft.body = setAt(draft.body, slot.at, value);
}

/**
 * The requests of one operation, by family: valid ones; one value of the wrong type; one at a bound
 * or one beyond; one huge or empty string; every string of the body (then of the query) with each
 * Unicode edge (a lone high or low surrogate, U+0000, valid pairs, BOM, bidi); each date alone at each
 * end of the calendar; an unknown field or parameter; a body that is not JSON or not sent as JSON;
 * odd Idempotency-Key and If-Match headers.
 */
export function requestFamilies(operation: FuzzOperation, document: Json, targets: FuzzTargets, auth: string | undefined): RequestFamily[] {
  const { op, path, method } = operation;
  const parameters = ((op.parameters ?? []) as Json[]).map((p) => resolve(p, document));
  const pathNames = parameters.filter((p) => p.in === 'path').map((p) => p.name as string);
  const queryParams = parameters.filter((p) => p.in === 'query');
  const bodySchema = op.requestBody?.content?.['application/json']?.schema as Json | undefined;
  const writes = ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method);
  const slots: Slot[] = [
    ...queryParams.map((p): Slot => ({ where: 'query', at: [p.name as string], schema: resolve(p.schema, document) })),
    ...(bodySchema ? bodySlots(bodySchema, document) : []),
  ];
  const dateSlots = slots.filter((slot) => isDateSchema(slot.schema));
  const stringSlots = slots.filter((slot) => isStringSchema(slot.schema, document));
  const bounded = slots.flatMap((slot) => boundValues(slot.schema, document).map((value) => ({ slot, value })));

  const pathArb = fc.record(Object.fromEntries(pathNames.map((name) => [name, pathParam(path, name, targets)])));
  // A cursor is opaque: only one the server gave is valid, so valid requests send none (other families do).
  const queryShape: Record<string, fc.Arbitrary<unknown>> = Object.fromEntries(
    queryParams.filter((p) => p.name !== 'cursor').map((p) => [p.name, validValue(p.schema, document, targets, p.name)]),
  );
  const queryArb = fc.record(queryShape, { requiredKeys: queryParams.filter((p) => p.required).map((p) => p.name as string) as never[] });
  const bodyArb = bodySchema ? validValue(bodySchema, document, targets) : fc.constant(undefined);

  const changes: [string, fc.Arbitrary<Change>][] = [['valid', fc.constant(() => {})]];
  if (slots.length) {
    changes.push([
      'wrong type',
      fc.tuple(fc.constantFrom(...slots), fc.constantFrom(...wrongTypes)).map(
        ([slot, value]) =>
          (d: Draft) =>
            setSlot(d, slot, value),
      ),
    ]);
  }
  if (bounded.length)
    changes.push([
      'bounds',
      fc.constantFrom(...bounded).map(
        ({ slot, value }) =>
          (d: Draft) =>
            setSlot(d, slot, value),
      ),
    ]);
  if (stringSlots.length) {
    changes.push([
      'huge or empty string',
      fc.tuple(fc.constantFrom(...stringSlots), fc.constantFrom('', ' ', huge(10_000), huge(300_000))).map(
        ([slot, value]) =>
          (d: Draft) =>
            setSlot(d, slot, value),
      ),
    ]);
  }
  // Each Unicode edge in every string of the body at once, then of the query (apart: one refused
  // first would hide the other): a lone surrogate (high, low), U+0000, and text that is valid.
  for (const edge of edgeTexts) {
    if (bodySchema)
      changes.push([
        `${JSON.stringify(edge)} in every body string`,
        fc.constant((d: Draft) => void (d.body = mapStrings(d.body, (s) => `${s}${edge}`))),
      ]);
    if (queryParams.length)
      changes.push([
        `${JSON.stringify(edge)} in every query value`,
        fc.constant((d: Draft) => void (d.query = mapStrings(d.query, (s) => `${s}${edge}`) as Json)),
      ]);
  }
  // Each date alone at each end of the calendar (the others valid): a window widened inside the server
  // shows only with one end at the edge and the other in range.
  for (const slot of dateSlots) {
    for (const edge of slot.schema.format === 'date' ? calendarEndDates : calendarEndInstants) {
      changes.push([`${slot.at.join('.')} at an end of the calendar`, fc.constant((d: Draft) => setSlot(d, slot, edge))]);
    }
  }
  const unknownAt = [
    ...(queryParams.length || !bodySchema ? [{ where: 'query' as const, at: [] as (string | number)[] }] : []),
    ...(bodySchema
      ? [
          { where: 'body' as const, at: [] as (string | number)[] },
          ...slots
            .filter((x) => x.where === 'body' && resolve(x.schema, document).type === 'object')
            .map((x) => ({ where: 'body' as const, at: x.at })),
        ]
      : []),
  ];
  changes.push([
    'unknown field',
    fc
      .tuple(fc.constantFrom(...unknownAt), fc.constantFrom('unknownField', 'constructor', '__proto__', '', '\ud800', 'a\u0000'))
      .map(([place, name]) => (d: Draft) => {
        if (place.where === 'query') d.query[name || 'x'] = 'x';
        else d.body = setAt(d.body, [...place.at, name], 'x');
      }),
  ]);
  if (bodySchema || writes) {
    changes.push([
      'body not JSON, or not sent as JSON',
      fc.oneof(
        fc.constantFrom(...badBodies).map((raw) => (d: Draft) => void (d.rawBody = raw)),
        fc.constantFrom(...contentTypes).map((type) => (d: Draft) => void (d.headers['content-type'] = type)),
      ),
    ]);
  }
  const headerChanges: fc.Arbitrary<Change>[] = [];
  if (writes) headerChanges.push(fc.constantFrom(...idempotencyKeys).map((key) => (d: Draft) => void (d.headers['idempotency-key'] = key)));
  if (parameters.some((p) => p.name === 'If-Match'))
    headerChanges.push(fc.constantFrom(...ifMatchValues).map((value) => (d: Draft) => void (d.headers['if-match'] = value)));
  if (headerChanges.length) changes.push(['odd headers', fc.oneof(...headerChanges)]);

  return changes.map(([name, change]) => ({
    name,
    requests: fc.record({ params: pathArb, query: queryArb, body: bodyArb, change }).map(({ params, query, body, change: apply }) => {
      const draft: Draft = { query: { ...query }, body, headers: auth ? { authorization: `Bearer ${auth}` } : {} };
      apply(draft);
      const pairs = Object.entries(draft.query).flatMap(([key, value]) =>
        (Array.isArray(value) ? value : [value]).map((v) => `${encodeQueryValue(key)}=${encodeQueryValue(v)}`),
      );
      const sendsBody = draft.rawBody !== undefined || (draft.body !== undefined && (bodySchema !== undefined || writes));
      if (sendsBody) draft.headers['content-type'] ??= 'application/json';
      return {
        method,
        url: `${fillPath(path, params)}${pairs.length ? `?${pairs.join('&')}` : ''}`,
        headers: draft.headers,
        body: draft.rawBody ?? (sendsBody ? JSON.stringify(draft.body) : undefined),
        variant: name,
      };
    }),
  }));
}

/** How many requests of each family one run of an operation tries, for a run of `scale` (1: the test's). */
export function runsOf(family: string, scale: number): number {
  const weight = family === 'valid' ? 3 : 1;
  return weight * scale;
}

/** Problems of an answer the fuzz run reports (a 5xx, an error body off the contract, an undocumented answer). */
export type AnswerCheck = (request: FuzzRequest, answer: FuzzAnswer) => void;

/** Sends `numRuns` requests of a family (fixed seed: the same requests every run) and checks each answer. */
export async function fuzzFamily(
  baseUrl: string,
  family: RequestFamily,
  options: { seed: number; numRuns: number },
  check: AnswerCheck,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(family.requests, async (request) => {
      check(request, await sendFuzzRequest(baseUrl, request));
    }),
    { seed: options.seed, numRuns: options.numRuns },
  );
}

export interface FuzzAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/** Sends a request; a stream (text/event-stream) is left once its status and headers have arrived. */
async function sendFuzzRequest(baseUrl: string, request: FuzzRequest): Promise<FuzzAnswer> {
  const controller = new AbortController();
  const res = await fetch(`${baseUrl}/api/v1${request.url}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: controller.signal,
  });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, headers: res.headers, text: '' };
  }
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** Why an answer breaks the rules every answer keeps (no 5xx, the contract's error body), or undefined. */
export function problemOf(answer: FuzzAnswer): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  if (answer.status === 405) return answer.text === '' ? undefined : 'a 405 with a body';
  let body: Json;
  try {
    body = JSON.parse(answer.text) as Json;
  } catch {
    return `an error body that is not JSON: ${answer.text.slice(0, 200)}`;
  }
  const error = body?.error as Json | undefined;
  if (
    !error ||
    typeof error.code !== 'string' ||
    typeof error.message !== 'string' ||
    typeof error.details !== 'object' ||
    error.details === null
  ) {
    return `an error body without code, message and details: ${answer.text.slice(0, 300)}`;
  }
  if (error.requestId !== answer.headers.get('x-request-id')) return 'error.requestId is not the X-Request-Id header';
  if (error.code === 'invalid_request') {
    const fields = error.details.fields as unknown;
    // A field may be named "" (an unknown key of that name), but it is named.
    if (!Array.isArray(fields) || !fields.length || fields.some((f) => typeof f !== 'string'))
      return `a 400 without the fields it names: ${answer.text.slice(0, 300)}`;
  }
  return undefined;
}

/**
 * Gives the tenant's venue a shift, an active floor plan, rules and one resource of each kind through
 * the API, then collects the ids of every collection (`ids`), so that generated ids reach real rows.
 */
export async function prepareFuzzTargets(baseUrl: string, key: string, venueId: string, document: Json): Promise<FuzzTargets> {
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await res.json().catch(() => ({}))) as Json;
    if (res.status >= 300) throw new Error(`fuzz fixture ${method} ${path} answered ${res.status}: ${JSON.stringify(json).slice(0, 300)}`);
    return Object.values(json)[0] as Json;
  };
  const tomorrow = isoDay(1);
  const venue = `/venues/${venueId}`;
  const shift = await call('POST', `${venue}/shifts`, {
    name: 'Dinner',
    daysOfWeek: [1, 2, 3, 4, 5, 6, 7],
    startTime: '18:00',
    lastSeatingTime: '22:00',
    endTime: '23:30',
  });
  const areaId = '5b0c8f5e-3a4d-4c2e-9a57-6f1de3b2a0aa';
  const plan = await call('POST', `${venue}/floor-plans`, {
    name: 'Main',
    areas: [{ id: areaId, name: 'Room', widthCm: 1000, heightCm: 800 }],
    tables: [2, 4, 6].map((seats) => ({ areaId, name: `T${seats}`, minSeats: 1, maxSeats: seats })),
  });
  await call('POST', `${venue}/floor-plans/${plan.id}/activate`);
  await call('POST', `${venue}/turn-time-rules`, { minPartySize: 1, maxPartySize: 4, durationMinutes: 90 });
  await call('POST', `${venue}/pacing-rules`, { shiftId: shift.id, maxCovers: 40, windowMinutes: 30 });
  await call('POST', `${venue}/closures`, { from: isoDay(300), to: isoDay(301), reason: 'Holidays' });
  const guest = await call('POST', '/guests', { venueId, phone: '06 1234 5678', firstName: 'Ada' });
  await call('POST', '/reservations', { venueId, serviceDate: tomorrow, time: '19:00', partySize: 2, guestId: guest.id });
  await call('POST', '/service-tags', { venueId, name: 'VIP' });
  await call('POST', '/webhook-endpoints', { venueId, url: 'https://partner.example.com/hooks/floorline' });
  await call('POST', '/automations', {
    venueId,
    name: 'Fuzz',
    eventTypes: ['reservation_created'],
    action: { type: 'partner_notification' },
  });
  await call('POST', '/waitlist', { venueId, partySize: 2, name: 'Waiting' });
  const hold = await call('POST', '/availability/holds', { venueId, serviceDate: tomorrow, time: '20:00', partySize: 2 });
  await call('POST', '/imports/guests', { rows: [{ venueId, phone: '06 5555 1234' }] });
  const ids: Record<string, string[]> = {};
  for (const { path, method, op } of operationsOf(document)) {
    const params = [...path.matchAll(/\{([A-Za-z]+)\}/g)].map((m) => m[1]);
    const lists = method === 'GET' && (op.parameters as Json[]).some((p) => p.name === 'limit');
    if (!lists || params.some((p) => p !== 'id') || (params.length && !path.startsWith('/venues/{id}'))) continue;
    const res = await fetch(`${baseUrl}/api/v1${path.replace('{id}', venueId)}?limit=20`, { headers: { authorization: `Bearer ${key}` } });
    const page = (await res.json()) as { data?: { id?: string }[] };
    ids[path] = (page.data ?? []).flatMap((row) => (row.id ? [row.id] : []));
  }
  // Holds have no list: the one made above.
  ids['/availability/holds'] = [hold.id as string];
  return { venueId, ids };
}
