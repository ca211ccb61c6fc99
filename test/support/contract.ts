import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { buildOpenApi } from '../../src/http/openapi.js';
import { apiRoutes } from '../../src/routes/index.js';

/**
 * Contract conformance: every answer the integration tests receive from /api/v1 is checked against
 * the OpenAPI document the server publishes (the schema of that operation and status). A status the
 * document does not list for the operation, or a body that does not match, throws: the test fails,
 * so the document cannot drift from the code.
 */

type Json = Record<string, any>;

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

interface Operation {
  method: string;
  path: string;
  pattern: RegExp;
}

let state: { document: Json; operations: Operation[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined;

function load() {
  if (state) return state;
  const document = buildOpenApi(apiRoutes) as Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, 'openapi.json');
  // Express tries the routes in the order of apiRoutes, so the same order decides here (/guests/lookup before /guests/{id}).
  const operations = apiRoutes.map((r) => ({
    method: r.method,
    path: r.path.replace(/:([A-Za-z]+)/g, '{$1}'),
    pattern: new RegExp(`^${r.path.replace(/:[A-Za-z]+/g, '[^/]+')}/?$`),
  }));
  state = { document, operations, ajv, validators: new Map() };
  return state;
}

function pointer(...segments: string[]): string {
  return segments.map((s) => '/' + encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('');
}

function validatorFor(s: NonNullable<typeof state>, path: string, method: string, status: string, mediaType: string): ValidateFunction {
  const ref = `openapi.json#${pointer('paths', path, method, 'responses', status, 'content', mediaType, 'schema')}`;
  let validate = s.validators.get(ref);
  if (!validate) {
    validate = s.ajv.compile({ $ref: ref });
    s.validators.set(ref, validate);
  }
  return validate;
}

export class ContractViolation extends Error {}

/**
 * Checks one answer of the API. `url` is the full request URL; answers outside /api/v1 or to a
 * method/path the document does not describe (unknown paths, 405s) are not operations and pass.
 */
export function checkConformance(method: string, url: string, status: number, headers: Headers, text: string): void {
  const { pathname } = new URL(url);
  if (!pathname.startsWith('/api/v1/')) return;
  const apiPath = pathname.slice('/api/v1'.length);
  const s = load();
  const lower = method.toLowerCase();
  const op = s.operations.find((o) => o.method === lower && o.pattern.test(apiPath));
  if (!op) return;
  const label = `${method.toUpperCase()} ${op.path} → ${status}`;
  const documented = s.document.paths[op.path][lower].responses[String(status)] as Json | undefined;
  if (!documented)
    throw new ContractViolation(
      `${label}: status not documented (documented: ${Object.keys(s.document.paths[op.path][lower].responses).join(', ')})\n${text.slice(0, 500)}`,
    );
  checkHeaders(label, s.document, documented, headers);
  const content = documented.content as Json | undefined;
  if (!content) {
    if (text !== '') throw new ContractViolation(`${label}: documented without a body, answered ${text.slice(0, 200)}`);
    return;
  }
  const mediaType = (headers.get('content-type') ?? '').split(';')[0].trim();
  if (!(mediaType in content))
    throw new ContractViolation(`${label}: media type ${mediaType || '(none)'} not documented (${Object.keys(content).join(', ')})`);
  if (mediaType !== 'application/json') return;
  const validate = validatorFor(s, op.path, lower, String(status), mediaType);
  const body: unknown = JSON.parse(text);
  if (!validate(body)) {
    const errors = (validate.errors ?? []).slice(0, 8).map((e) => `  ${e.instancePath || '/'} ${e.message} ${JSON.stringify(e.params)}`);
    throw new ContractViolation(`${label}: body does not match the documented schema\n${errors.join('\n')}\n${text.slice(0, 800)}`);
  }
}

/** The API's own headers: an answer carrying one must have it documented for that status. */
const ownHeaders = ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset', 'Retry-After', 'ETag'];

/** The documented headers of an answer are the ones it sends, with values of their documented type. */
function checkHeaders(label: string, document: Json, documented: Json, headers: Headers): void {
  const components = (document.components as { headers: Record<string, Json> }).headers;
  const declared = new Map(
    Object.entries((documented.headers ?? {}) as Record<string, { $ref: string }>).map(([name, ref]) => [
      name.toLowerCase(),
      components[ref.$ref.split('/').pop()!],
    ]),
  );
  if (!headers.get('x-request-id')) throw new ContractViolation(`${label}: no X-Request-Id`);
  for (const name of ownHeaders) {
    const value = headers.get(name);
    if (value === null) continue;
    const header = declared.get(name.toLowerCase());
    if (!header) throw new ContractViolation(`${label}: sends ${name}, which the document does not declare for this answer`);
    if ((header.schema as Json).type === 'integer' && !/^\d+$/.test(value))
      throw new ContractViolation(`${label}: ${name} is not an integer: ${value}`);
  }
}
