import { z } from 'zod';
import type { AnyRoute } from './define-route.js';
import { errorStatus } from './errors.js';

const toSchema = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'openapi-3.0' });

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z]+)/g, '{$1}');
}

function parametersOf(schema: z.ZodObject<z.ZodRawShape> | undefined, where: 'path' | 'query') {
  if (!schema) return [];
  return Object.entries(schema.shape).map(([name, field]) => ({
    name,
    in: where,
    required: where === 'path' || !(field as z.ZodType).safeParse(undefined).success,
    schema: toSchema(field as z.ZodType),
  }));
}

const errorBody = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message', 'details', 'requestId'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorStatus) },
        message: { type: 'string' },
        details: { type: 'object' },
        requestId: { type: 'string' },
      },
    },
    livemode: { type: 'boolean' },
  },
};

/** The OpenAPI document, built from the very zod schemas that validate requests. */
export function buildOpenApi(routes: AnyRoute[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    const descriptionParts = [route.description];
    if (route.scope) descriptionParts.push(`Scope: \`${route.scope}\`.`);
    if (route.widget) descriptionParts.push('Also open to publishable (widget) keys from their allowed origins.');
    if (route.organisationWide) descriptionParts.push('Refused (403) to keys limited to certain venues.');
    paths[path][route.method] = {
      summary: route.summary,
      description: descriptionParts.filter(Boolean).join(' '),
      tags: [route.tag],
      security: route.public ? [] : [{ bearer: [] }],
      parameters: [...parametersOf(route.params, 'path'), ...parametersOf(route.query, 'query')],
      // A write without a body counts as `{}`: the body is required only when `{}` is not valid.
      ...(route.body ? { requestBody: { required: !route.body.safeParse({}).success, content: { 'application/json': { schema: toSchema(route.body) } } } } : {}),
      responses: {
        [String(route.successStatus ?? 200)]: { description: 'Success' },
        default: { description: 'Error', content: { 'application/json': { schema: errorBody } } },
      },
    };
  }
  return {
    openapi: '3.0.3',
    info: {
      title: 'Reservation and Floor Management API',
      version: '1.0.0',
      description: 'JSON API for restaurant reservations and floor management. See docs/api.md for the decisions behind each behaviour.',
    },
    servers: [{ url: '/api/v1' }],
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
