import { z } from 'zod';
import { defineRoute, type AnyRoute } from '../http/define-route.js';
import { buildOpenApi } from '../http/openapi.js';
import { checkDependencies } from '../services/health.js';
import { appVersion } from '../version.js';

/** Meta routes need the finished route list for the OpenAPI document, hence a factory. */
export function metaRoutes(allRoutes: () => AnyRoute[]): AnyRoute[] {
  let openApiCache: string | undefined;
  return [
    defineRoute({
      method: 'get',
      path: '/me',
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
      tag: 'Meta',
      summary: 'Service status',
      handler: async () => {
        const deps = await checkDependencies();
        return { body: { status: deps.database && deps.redis ? 'ok' : 'degraded', database: deps.database ? 'ok' : 'unreachable', redis: deps.redis ? 'ok' : 'unreachable', version: appVersion } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/openapi.json',
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
