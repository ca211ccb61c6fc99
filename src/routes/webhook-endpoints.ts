import type { Request } from 'express';
import { z } from 'zod';
import type { AuthContext } from '../core/auth-context.js';
import { canonicalJson, hashCanonical } from '../lib/canonical-json.js';
import { defaultOverlapMinutes, maxOverlapMinutes } from '../lib/secret-rotation.js';
import { defineRoute } from '../http/define-route.js';
import { checkIdempotencyKey, type RouteResult } from '../core/route-definition.js';
import { listQuerySchema } from '../services/pagination.js';
import type { SecretIdempotency } from '../services/webhooks/secret-handout.js';
import type { SigningSecretBox } from '../services/webhooks/signing-secrets.js';
import { rotateWebhookSecret, type RotationTarget } from '../services/webhooks/secret-rotation-service.js';
import { sendTestWebhook } from '../services/webhooks/test-webhook.js';
import { signatureSchemeSchema, webhookEndpointJson, webhookEndpointSchema } from '../services/webhooks/webhook-endpoint-json.js';
import {
  createEndpoint,
  deleteEndpoint,
  getVisibleEndpoint,
  listEndpoints,
  updateEndpoint,
} from '../services/webhooks/webhook-endpoint-service.js';
import { checkWebhookTarget, webhookUrlSchema } from '../services/webhooks/webhook-url.js';
import { instant, keyed, pageOf, uuid } from '../core/response-schemas.js';
import { instantParam } from '../core/validation.js';
import { recoveryJson, recoverySchema } from '../services/webhooks/delivery-json.js';
import { recoverDeliveries, recoveryWindowDays } from '../services/webhooks/delivery-service.js';
import { exampleCreateWebhookEndpoint } from '../http/openapi-examples.js';

const idParams = z.object({ id: z.uuid() });

const secretSchema = z
  .string()
  .regex(/^whsec_([A-Za-z0-9_-]{43}|[A-Za-z0-9+/]{43}=)$/)
  .describe(
    'Shown once; `whsec_` + 32 random bytes. `service-v1`: base64url, the HMAC key is the UTF-8 bytes of the whole string. `standard-webhooks`: standard base64, the HMAC key is the base64 decoding of what follows `whsec_`.',
  );

export const rotationAnswer = z
  .object({ secret: secretSchema, secretVersion: z.number().int(), previousSecretExpiresAt: instant })
  .describe('A new signing secret, shown once; the previous one keeps signing until previousSecretExpiresAt.');

const testDeliverySchema = z.object({
  id: uuid,
  status: z.enum(['delivered', 'failed']),
  responseStatus: z.number().int().nullable(),
  durationMs: z.number().int().min(0),
  error: z.string().nullable(),
});

export const rotationBody = z.object({
  overlapMinutes: z.number().int().min(0).max(maxOverlapMinutes).default(defaultOverlapMinutes),
});

/**
 * The routes that show a new secret (creation, rotations) handle Idempotency-Key themselves
 * (`idempotency: 'manual'`): a repeat must return the secret shown the first time, which the shared
 * store must not keep in clear. The claim has the shape the shared store gives it.
 */
function secretIdempotency(req: Request, path: string): SecretIdempotency | undefined {
  const header = req.headers['idempotency-key'];
  if (header === undefined) return undefined;
  const key = checkIdempotencyKey(String(header));
  return { key, operation: `POST ${path} ${canonicalJson(req.params)}`, requestHash: hashCanonical(req.body ?? {}) };
}

function replayHeaders(replayed: boolean): Record<string, string> {
  return replayed ? { 'Idempotent-Replayed': 'true' } : {};
}

export async function handleRotation(
  req: Request,
  auth: AuthContext,
  path: string,
  target: RotationTarget,
  overlapMinutes: number,
  secrets: SigningSecretBox,
): Promise<RouteResult> {
  const { result, replayed } = await rotateWebhookSecret(auth, target, overlapMinutes, secrets, secretIdempotency(req, path));
  return { body: { ...result }, headers: replayHeaders(replayed) };
}

const testBody = z
  .object({ endpointId: z.uuid().optional(), venueId: z.uuid().optional(), url: webhookUrlSchema.optional() })
  .superRefine((body, ctx) => {
    const byEndpoint = body.endpointId !== undefined;
    const byAddress = body.venueId !== undefined || body.url !== undefined;
    if (byEndpoint && byAddress) {
      ctx.addIssue({ code: 'custom', path: ['endpointId'], message: 'give either endpointId or venueId and url' });
    } else if (!byEndpoint) {
      if (body.venueId === undefined) ctx.addIssue({ code: 'custom', path: ['venueId'], message: 'required without endpointId' });
      if (body.url === undefined) ctx.addIssue({ code: 'custom', path: ['url'], message: 'required without endpointId' });
    }
  });

const dayMs = 24 * 3600_000;

const recoverBody = z
  .object({
    since: instantParam.refine(
      (since) => since.getTime() >= Date.now() - recoveryWindowDays * dayMs,
      `must be at most ${recoveryWindowDays} days ago`,
    ),
    until: instantParam.optional(),
  })
  .superRefine((body, ctx) => {
    // zod runs this even when a field failed (it then holds what was sent): compare instants only.
    if (!(body.since instanceof Date) || (body.until !== undefined && !(body.until instanceof Date))) return;
    // `until` defaults to now (in the handler).
    if (body.until && body.until < body.since) ctx.addIssue({ code: 'custom', path: ['until'], message: 'must not be before since' });
    if (!body.until && body.since.getTime() > Date.now())
      ctx.addIssue({ code: 'custom', path: ['since'], message: 'must not be in the future without until' });
  });

export const webhookEndpointRoutes = [
  defineRoute({
    method: 'get',
    path: '/webhook-endpoints',
    operationId: 'listWebhookEndpoints',
    responses: { 200: pageOf(webhookEndpointSchema) },
    tag: 'Webhooks',
    summary: 'List the webhook destinations of the venues visible to the key',
    scope: 'webhooks:read',
    query: listQuerySchema.extend({ venueId: z.uuid().optional() }),
    handler: async ({ auth, query, services }) => {
      const page = await listEndpoints(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(webhookEndpointJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints',
    operationId: 'createWebhookEndpoint',
    responses: { 201: z.object({ webhookEndpoint: webhookEndpointSchema, secret: secretSchema }) },
    errors: ['conflict'],
    examples: { request: exampleCreateWebhookEndpoint },
    tag: 'Webhooks',
    summary: 'Register a webhook destination; its secret is returned once',
    description:
      'The first destination registered for a venue is its main destination, used by actions that name neither an address nor a destination.',
    scope: 'webhooks:write',
    body: z.object({ venueId: z.uuid(), url: webhookUrlSchema, signatureScheme: signatureSchemeSchema.optional() }),
    successStatus: 201,
    idempotency: 'manual',
    handler: async ({ auth, body, req, services }) => {
      checkWebhookTarget(body.url, 'url', services.webhookTargets.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
      const { result, replayed } = await createEndpoint(auth, body, services.signingSecrets, secretIdempotency(req, '/webhook-endpoints'));
      return { body: { webhookEndpoint: webhookEndpointJson(result.endpoint), secret: result.secret }, headers: replayHeaders(replayed) };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/test',
    operationId: 'testWebhookEndpoint',
    responses: { 200: keyed('delivery', testDeliverySchema) },
    tag: 'Webhooks',
    summary: 'Send a signed webhook_test now to a destination or an address and return the outcome (not kept)',
    scope: 'webhooks:write',
    body: testBody,
    handler: async ({ auth, body, services }) => {
      checkWebhookTarget(body.url, 'url', services.webhookTargets.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
      const target = body.endpointId ? { endpointId: body.endpointId } : { venueId: body.venueId!, url: body.url! };
      return { body: { delivery: await sendTestWebhook(auth, target, services.signingSecrets, services.webhookTargets) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/webhook-endpoints/:id',
    operationId: 'getWebhookEndpoint',
    responses: { 200: keyed('webhookEndpoint', webhookEndpointSchema) },
    tag: 'Webhooks',
    summary: 'Read a webhook destination',
    scope: 'webhooks:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { webhookEndpoint: webhookEndpointJson(await getVisibleEndpoint(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/webhook-endpoints/:id',
    operationId: 'updateWebhookEndpoint',
    responses: { 200: keyed('webhookEndpoint', webhookEndpointSchema) },
    tag: 'Webhooks',
    summary: 'Change the address of a webhook destination or turn it on or off',
    description:
      'Turning on (`isActive: true`) a destination the platform disabled resets its health and emits `webhook_endpoint_enabled`; nothing discarded is sent again.',
    scope: 'webhooks:write',
    params: idParams,
    body: z.object({ url: webhookUrlSchema.optional(), isActive: z.boolean().optional() }),
    handler: async ({ auth, params, body, log, services }) => {
      checkWebhookTarget(body.url, 'url', services.webhookTargets.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
      return { body: { webhookEndpoint: webhookEndpointJson(await updateEndpoint(auth, params.id, body, log)) } };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/webhook-endpoints/:id',
    operationId: 'deleteWebhookEndpoint',
    responses: { 204: null },
    tag: 'Webhooks',
    summary: 'Delete a webhook destination',
    scope: 'webhooks:write',
    params: idParams,
    successStatus: 204,
    handler: async ({ auth, params }) => {
      await deleteEndpoint(auth, params.id);
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/:id/recover',
    operationId: 'recoverWebhookEndpointDeliveries',
    responses: { 202: keyed('recovery', recoverySchema) },
    errors: ['conflict'],
    tag: 'Webhooks',
    summary: 'Send again the discarded deliveries of a destination created in a window, in event order',
    description:
      `Every delivery of the destination created in [since, until] that was discarded starts a fresh cycle of five attempts, as a redelivery does, sent in the order of the events' creation. ` +
      `\`since\` at most ${recoveryWindowDays} days ago; \`until\` defaults to now. 409 \`conflict\` (\`reason: endpoint_disabled\`) while the destination is disabled.`,
    scope: 'webhooks:write',
    params: idParams,
    body: recoverBody,
    successStatus: 202,
    handler: async ({ auth, params, body, log, services }) => {
      const window = { since: body.since, until: body.until ?? new Date() };
      return { body: { recovery: recoveryJson(await recoverDeliveries(auth, params.id, window, services.deliveryQueue, log)) } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/webhook-endpoints/:id/rotate-secret',
    operationId: 'rotateWebhookEndpointSecret',
    responses: { 200: rotationAnswer },
    errors: ['conflict'],
    tag: 'Webhooks',
    summary: 'Generate the next secret version of a destination and return it once',
    description: 'During `overlapMinutes` (0 to 10080, default 1440) deliveries carry two signatures, the new one first.',
    scope: 'webhooks:write',
    params: idParams,
    body: rotationBody,
    idempotency: 'manual',
    handler: ({ auth, params, body, req, services }) =>
      handleRotation(
        req,
        auth,
        '/webhook-endpoints/:id/rotate-secret',
        { kind: 'endpoint', endpointId: params.id },
        body.overlapMinutes,
        services.signingSecrets,
      ),
  }),
];
