import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/define-route.js';
import { buildOpenApi } from '../http/openapi.js';
import { checkDependencies } from '../monitoring/health.js';
import { appVersion } from '../version.js';
import { uuid } from '../core/response-schemas.js';

const meAnswer = z.object({
  key: z.object({
    id: uuid,
    name: z.string(),
    kind: z.enum(['live', 'test', 'publishable']),
    livemode: z.boolean(),
    scopes: z.array(z.string()),
    venueIds: z.array(uuid).nullable().describe('null: every venue of the organisation'),
    organisationId: uuid,
  }),
});

const statusAnswer = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.enum(['ok', 'unreachable']),
  redis: z.enum(['ok', 'unreachable']),
  version: z.string(),
});

/** Meta routes need the finished route list for the OpenAPI document, hence a factory. */
export function metaRoutes(allRoutes: () => AnyRoute[]): AnyRoute[] {
  let openApiCache: string | undefined;
  return [
    defineRoute({
      method: 'get',
      path: '/me',
      operationId: 'getMe',
      responses: { 200: meAnswer },
      tag: 'Meta',
      summary: 'The calling key',
      handler: async ({ auth }) => ({
        body: {
          key: {
            id: auth.keyId,
            name: auth.keyName,
            kind: auth.kind,
            livemode: auth.livemode,
            scopes: [...auth.scopes],
            venueIds: auth.venueIds,
            organisationId: auth.organisationId,
          },
        },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/status',
      operationId: 'getStatus',
      responses: { 200: statusAnswer },
      tag: 'Meta',
      summary: 'Service status',
      handler: async () => {
        const deps = await checkDependencies();
        return {
          body: {
            status: deps.database && deps.redis ? 'ok' : 'degraded',
            database: deps.database ? 'ok' : 'unreachable',
            redis: deps.redis ? 'ok' : 'unreachable',
            version: appVersion,
          },
        };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApiDocument',
      responses: { 200: z.object({ openapi: z.string() }).catchall(z.unknown()) },
      tag: 'Meta',
      summary: 'This OpenAPI document',
      public: true,
      query: z.object({}),
      raw: true,
      handler: async ({ res }) => {
        openApiCache ??= JSON.stringify(buildOpenApi(allRoutes()));
        res.type('application/json').send(openApiCache);
      },
    }),
  ];
}
