import { z } from 'zod';
import { automationStatuses } from '../db/schema/index.js';
import { defineRoute } from '../http/define-route.js';
import { automationJson } from '../services/automations/automation-json.js';
import {
  archiveAutomation,
  createAutomation,
  getVisibleAutomation,
  listAutomations,
  updateAutomation,
} from '../services/automations/automation-service.js';
import { automationEventTypes } from '../lib/event-catalogue.js';
import { listQuerySchema } from '../services/pagination.js';
import { checkWebhookTarget, webhookUrlSchema } from '../services/webhooks/webhook-url.js';
import { keyed, pageOf } from '../core/response-schemas.js';
import { automationSchema } from '../services/automations/automation-json.js';

const idParams = z.object({ id: z.uuid() });

const reservationSources = ['phone', 'voice_agent', 'floor', 'waitlist', 'walk_in', 'api', 'import'] as const;

const partySize = z.number().int().min(1).max(500);
const conditionsSchema = z
  .strictObject({
    partySizeMin: partySize.nullable().default(null),
    partySizeMax: partySize.nullable().default(null),
    sources: z.array(z.enum(reservationSources)).min(1).nullable().default(null),
  })
  .default({ partySizeMin: null, partySizeMax: null, sources: null });

const actionSchema = z
  .strictObject({
    type: z.literal('partner_notification'),
    url: webhookUrlSchema.nullable().default(null),
    endpointId: z.uuid().nullable().default(null),
    delayMinutes: z.number().int().min(0).max(10080).default(0),
  })
  .superRefine((action, ctx) => {
    if (action.url && action.endpointId) {
      for (const field of ['url', 'endpointId'])
        ctx.addIssue({ code: 'custom', path: [field], message: 'give either url or endpointId, not both' });
    }
  });

const automationFields = {
  name: z.string().trim().min(1).max(200),
  eventTypes: z
    .array(z.enum(automationEventTypes))
    .min(1)
    .max(automationEventTypes.length)
    .refine((types) => new Set(types).size === types.length, 'event types must not repeat'),
  conditions: conditionsSchema,
  action: actionSchema,
  status: z.enum(['active', 'inactive']).default('active'),
};

const createBody = z.object({ venueId: z.uuid(), ...automationFields });

const patchBody = z.object({
  name: automationFields.name.optional(),
  eventTypes: automationFields.eventTypes.optional(),
  conditions: conditionsSchema.unwrap().optional(),
  action: actionSchema.optional(),
  status: z.enum(['active', 'inactive']).optional(),
});

const listQuery = listQuerySchema.extend({ venueId: z.uuid().optional(), status: z.enum(automationStatuses).optional() });

export const automationRoutes = [
  defineRoute({
    method: 'get',
    path: '/automations',
    operationId: 'listAutomations',
    responses: { 200: pageOf(automationSchema) },
    tag: 'Automations',
    summary: 'List automations',
    description: 'Archived automations are listed only with `status=archived` or with `changedAfter`.',
    scope: 'webhooks:read',
    query: listQuery,
    handler: async ({ auth, query, services }) => {
      const page = await listAutomations(auth, { ...query, cursorKey: services.cursorKey });
      return { body: { data: page.rows.map(automationJson), nextCursor: page.nextCursor } };
    },
  }),
  defineRoute({
    method: 'post',
    path: '/automations',
    operationId: 'createAutomation',
    responses: { 201: keyed('automation', automationSchema) },
    tag: 'Automations',
    summary: 'Create an automation: on these events, when the conditions hold, notify a partner',
    scope: 'webhooks:write',
    body: createBody,
    successStatus: 201,
    handler: async ({ auth, body, services }) => {
      checkWebhookTarget(body.action.url, 'action.url', services.webhookTargets.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
      return { body: { automation: automationJson(await createAutomation(auth, body)) } };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/automations/:id',
    operationId: 'getAutomation',
    responses: { 200: keyed('automation', automationSchema) },
    tag: 'Automations',
    summary: 'Read an automation',
    scope: 'webhooks:read',
    params: idParams,
    handler: async ({ auth, params }) => ({ body: { automation: automationJson(await getVisibleAutomation(auth, params.id)) } }),
  }),
  defineRoute({
    method: 'patch',
    path: '/automations/:id',
    operationId: 'updateAutomation',
    responses: { 200: keyed('automation', automationSchema) },
    tag: 'Automations',
    summary: 'Change an automation; `status: inactive` annuls its deliveries waiting for a retry',
    scope: 'webhooks:write',
    params: idParams,
    body: patchBody,
    handler: async ({ auth, params, body, log, services }) => {
      checkWebhookTarget(body.action?.url, 'action.url', services.webhookTargets.WEBHOOKS_ALLOW_PRIVATE_TARGETS);
      return { body: { automation: automationJson(await updateAutomation(auth, params.id, body, log)) } };
    },
  }),
  defineRoute({
    method: 'delete',
    path: '/automations/:id',
    operationId: 'archiveAutomation',
    responses: { 200: keyed('automation', automationSchema) },
    tag: 'Automations',
    summary: 'Archive an automation; its deliveries waiting for a retry are annulled',
    scope: 'webhooks:write',
    params: idParams,
    handler: async ({ auth, params, log }) => ({ body: { automation: automationJson(await archiveAutomation(auth, params.id, log)) } }),
  }),
];
